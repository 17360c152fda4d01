"""`svmkit easy training_file [testing_file]`: LIBSVM easy.py's pipeline — scale the training
data to [−1, 1] (saving the ranges), choose C and γ by 5-fold cross-validation over grid.py's
grid, train C-SVC with them, scale the test data with the same ranges and predict it. Every
output goes into the folder `<training_file name>.easy`."""

from __future__ import annotations

import os

from svmkit.cli.common import check_outputs, release_workers
from svmkit.cli.grid import table, write_table
from svmkit.cli.progress import progress_callback
from svmkit.io.atomic import atomic_write


def add_parser(sub):
    p = sub.add_parser("easy", help="scale, grid-search C and gamma, train and test, as LIBSVM's easy.py")
    p.add_argument("training_file", help="training data in LIBSVM format")
    p.add_argument("testing_file", nargs="?", help="test data in LIBSVM format")
    p.add_argument("-o", "--out-dir", help="folder for the outputs (default: <training_file name>.easy)")
    p.add_argument("-j", "--jobs", type=int, default=-1, help="parallel tasks of the grid (default: every core)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def _write_data(path, X, y):
    from svmkit.io.data import format_rows

    with atomic_write(path) as fh:
        fh.writelines(format_rows(X, [f"{v:g}" for v in y]))


def _pictures(out, name, search, model, X, y):
    """The CV heatmap and, for 2-D data, the decision boundary, as PNG files in `out`; none,
    with a note, when matplotlib (the `plot` extra) is missing."""
    try:
        from svmkit.cli.plot import agg, save_png
        from svmkit.plot import cv_heatmap, decision_boundary

        agg()
    except ImportError as err:
        print(f"Pictures skipped: {err}")
        return []
    paths = [save_png(cv_heatmap(search)[0], os.path.join(out, f"{name}.grid.png"))]
    if X.shape[1] == 2:
        paths.append(save_png(decision_boundary(model, X, y), os.path.join(out, f"{name}.boundary.png")))
    return paths


def run(args) -> int:
    from svmkit.cli.report import accuracy_line
    from svmkit.cli.train import fit_in_libsvm_order
    from svmkit.io.data import load_svmlight, pad_columns
    from svmkit.io.libsvm_model import save_libsvm_model
    from svmkit.model_selection import SVMSearchCV
    from svmkit.models import SVC
    from svmkit.preprocessing import LibsvmScaler

    name = os.path.basename(args.training_file)
    out = args.out_dir or f"{name}.easy"
    os.makedirs(out, exist_ok=True)
    check_outputs(os.path.join(out, f"{name}.model"))
    X, y = load_svmlight(args.training_file)
    if args.testing_file:
        Xt, yt = load_svmlight(args.testing_file)
        width = max(X.shape[1], Xt.shape[1])
        X, Xt = pad_columns(X, width), pad_columns(Xt, width)
    scaler = LibsvmScaler().fit(X)
    range_file = os.path.join(out, f"{name}.range")
    print("Scaling training data...")
    scaler.save_range(range_file)
    Xs = scaler.transform(X)
    _write_data(os.path.join(out, f"{name}.scale"), Xs, y)
    print("Cross validation...")
    search = SVMSearchCV(SVC(), cv=5, n_jobs=args.jobs, random_state=0, prefer_fewer_sv=False, refit=False)
    try:
        search.fit(Xs, y, on_task=progress_callback("grid", "task", args.quiet))
    finally:
        release_workers()
    write_table(os.path.join(out, f"{name}.grid.csv"), *table(search, regression=False)[1:])
    best = search.best_params_
    print(f"Best c={best['C']:g}, g={best['gamma']:g} CV rate={100 * search.best_score_:g} (the best mean CV rate)")
    print("Training...")
    model = SVC(C=best["C"], gamma=best["gamma"])
    fit_in_libsvm_order(model, Xs, y)
    model_file = os.path.join(out, f"{name}.model")
    save_libsvm_model(model, model_file)
    print(f"Output model: {model_file}")
    for path in _pictures(out, name, search, model, Xs, y):
        print(f"Output picture: {path}")
    if args.testing_file:
        test_name = os.path.basename(args.testing_file)
        print("Scaling testing data...")
        Xts = scaler.transform(Xt)
        _write_data(os.path.join(out, f"{test_name}.scale"), Xts, yt)
        print("Testing...")
        pred = model.predict(Xts)
        predict_file = os.path.join(out, f"{test_name}.predict")
        with atomic_write(predict_file) as fh:
            fh.writelines(f"{v:g}\n" for v in pred)
        print(accuracy_line(yt, pred))
        print(f"Output prediction: {predict_file}")
    return 0
