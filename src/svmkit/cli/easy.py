"""`svmkit easy FILE`: fit SVC on a LIBSVM data file and report cross-validation and the fit."""

from __future__ import annotations


def add_parser(sub):
    p = sub.add_parser("easy", help="fit SVC on a LIBSVM data file and report CV accuracy and the fit")
    p.add_argument("data", help="training data in LIBSVM format")
    p.add_argument("-c", "--cost", type=float, default=1.0, help="C (default 1)")
    p.add_argument("-g", "--gamma", default="scale", help="RBF gamma: a float, 'scale' or 'auto'")
    p.add_argument("-v", "--folds", type=int, default=5, help="cross-validation folds (default 5)")
    p.set_defaults(run=run)


def run(args) -> int:
    # scikit-learn and Numba: only when the command runs
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from svmkit.io.data import load_svmlight
    from svmkit.models import SVC

    X, y = load_svmlight(args.data)
    gamma = args.gamma if args.gamma in ("scale", "auto") else float(args.gamma)
    model = SVC(C=args.cost, gamma=gamma)
    folds = StratifiedKFold(args.folds, shuffle=True, random_state=0)
    acc = cross_val_score(model, X, y, cv=folds)
    model.fit(X, y)
    print(f"data: {args.data} ({X.shape[0]} rows, {X.shape[1]} features, {len(model.classes_)} classes)")
    print(f"SVC(C={args.cost:g}, kernel='rbf', gamma={model.gamma_:.6g})")
    print(f"{args.folds}-fold cross-validation accuracy = {100 * acc.mean():.4f}% (± {100 * acc.std():.2f})")
    print(f"support vectors: {model.support_.size} ({model.free_support_.size} free, "
          f"{model.bounded_support_.size} bounded at C); leave-one-out bound #SV/N = {model.loo_bound_:.4f}")
    for k, (obj, b) in enumerate(zip(model.objective_, model._intercept_)):
        print(f"pair {k}: dual objective = {obj:.6f}, b = {b:.6f}")
    return 0
