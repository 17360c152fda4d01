"""`svmkit train [options] training_file [model_file]`: svm-train's flags, defaults, console
summary and model file; `--format native` writes svmkit's own file instead."""

from __future__ import annotations

import os
import sys

import numpy as np

from svmkit.cli.common import check_inputs, check_outputs, number, read_data
from svmkit.cli.progress import gap_progress, progress
from svmkit.cli.report import accuracy_line, regression_lines

# The estimators, the model files and scikit-learn's splitters are imported in the functions
# that use them, so that building the parser (every command does) loads neither scikit-learn
# nor the compiled core.

#: svm-train's usage text (LIBSVM 3.37), with svmkit's defaults and its own options.
USAGE = """\
Usage: svmkit train [options] training_set_file [model_file]
options:
-s svm_type : set type of SVM (default 0)
	0 -- C-SVC		(multi-class classification)
	1 -- nu-SVC		(multi-class classification)
	2 -- one-class SVM
	3 -- epsilon-SVR	(regression)
	4 -- nu-SVR		(regression)
-t kernel_type : set type of kernel function (default 2)
	0 -- linear: u'*v
	1 -- polynomial: (gamma*u'*v + coef0)^degree
	2 -- radial basis function: exp(-gamma*|u-v|^2)
	3 -- sigmoid: tanh(gamma*u'*v + coef0)
	4 -- precomputed kernel (kernel values in training_set_file)
-d degree : set degree in kernel function (default 3)
-g gamma : set gamma in kernel function (default 1/num_features)
-r coef0 : set coef0 in kernel function (default 0)
-c cost : set the parameter C of C-SVC, epsilon-SVR, and nu-SVR (default 1)
-n nu : set the parameter nu of nu-SVC, one-class SVM, and nu-SVR (default 0.5)
-p epsilon : set the epsilon in loss function of epsilon-SVR (default 0.1)
-m cachesize : set cache memory size in MB (default 1024; svm-train's is 100)
-e epsilon : set tolerance of termination criterion (default 0.001)
-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)
-b probability_estimates : whether to train a SVC or SVR model for probability estimates, 0 or 1 (default 0)
-wi weight : set the parameter C of class i to weight*C, for C-SVC (default 1)
-v n: n-fold cross validation mode
-q : quiet mode (no outputs)
svmkit's own:
--linear : LIBLINEAR's solvers by its -s numbers (default -s 1), written as a LIBLINEAR model
-B bias : with --linear, append a constant feature bias if bias > 0 (default -1: none)
--format libsvm|native : the model file's format (default libsvm)
--help : every option in full
"""


def add_parser(sub):
    p = sub.add_parser(
        "train", add_help=False, help="train a model from a LIBSVM data file (svm-train's options)",
        usage="svmkit train [options] training_file [model_file]", libsvm_usage=USAGE,
        description="svm_type -s: 0 C-SVC, 1 nu-SVC, 2 one-class SVM, 3 epsilon-SVR, 4 nu-SVR; "
                    "kernel_type -t: 0 linear, 1 polynomial, 2 radial basis function, 3 sigmoid, "
                    "4 precomputed kernel.")
    p.add_argument("--help", action="help", help="show this help and exit")
    add_svm_options(p)
    p.add_argument("-v", "--cross-validation", type=int, metavar="N", help="N-fold cross validation only")
    p.add_argument("-q", "--quiet", action="store_true", help="quiet mode (no output)")
    p.add_argument("--format", choices=("libsvm", "native"), default="libsvm", help="model file format")
    p.add_argument("--linear", action="store_true",
                   help="LIBLINEAR's solvers, by its -s numbers (default 1, as LIBLINEAR's train): 1 L2-loss SVC "
                        "(dual), 2 L2-loss SVC (primal), 3 L1-loss SVC (dual), 4 Crammer-Singer multi-class SVC, "
                        "5 L1-regularised L2-loss SVC, 11 L2-loss SVR (primal), 12 L2-loss SVR (dual), 13 L1-loss SVR (dual); "
                        "the model is a LIBLINEAR file")
    p.add_argument("-B", "--bias", type=number, default=-1.0,
                   help="with --linear: bias b > 0 adds a constant feature b (default -1; b <= 0: none)")
    p.add_argument("training_file")
    p.add_argument("model_file", nargs="?")
    p.set_defaults(run=run)


def add_svm_options(p):
    """svm-train's model options (-s -t -d -g -r -c -n -p -m -e -h -b -w), for train and grid."""
    p.add_argument("-s", "--svm-type", type=int, default=None, help="(default 0; with --linear 1)")
    p.add_argument("-t", "--kernel-type", type=int, choices=range(5), default=2, help="(default 2)")
    p.add_argument("-d", "--degree", type=int, default=3, help="degree in the kernel function (default 3)")
    p.add_argument("-g", "--gamma", type=number, default=0.0, help="gamma in the kernel (default 1/num_features)")
    p.add_argument("-r", "--coef0", type=number, default=0.0, help="coef0 in the kernel (default 0)")
    p.add_argument("-c", "--cost", type=number, default=1.0, help="C of C-SVC, epsilon-SVR, nu-SVR (default 1)")
    p.add_argument("-n", "--nu", type=number, default=0.5, help="nu of nu-SVC, one-class SVM, nu-SVR (default 0.5)")
    p.add_argument("-p", "--epsilon", type=number, default=0.1, help="epsilon of epsilon-SVR's loss (default 0.1)")
    p.add_argument("-m", "--cache-size", type=number, default=None,
                   help="kernel cache in MB (default: the estimators' 1024; svm-train's is 100)")
    p.add_argument("-e", "--tolerance", type=number, default=None,
                   help="stopping tolerance (default 0.001; with --linear, LIBLINEAR's: 0.1 for -s 1, 3, 4, 12 "
                        "and 13, 0.01 for -s 2 and 5, 0.0001 for -s 11)")
    p.add_argument("-h", "--shrinking", type=int, choices=(0, 1), default=1, help="use shrinking (default 1)")
    p.add_argument("-b", "--probability", type=int, choices=(0, 1), default=0,
                   help="train for probability estimates (default 0)")
    p.add_argument("-w", "--weight", nargs=2, action="append", default=[], metavar=("LABEL", "WEIGHT"),
                   help="C of class LABEL is WEIGHT*C (C-SVC; nu-SVC ignores it, as svm-train does); "
                        "svm-train's -wLABEL WEIGHT works too")


def split_weight_flags(argv):
    """svm-train's -wLABEL WEIGHT (e.g. -w-1 2.5) as --weight LABEL WEIGHT."""
    out = []
    for tok in argv:
        if tok.startswith("-w") and len(tok) > 2 and not tok.startswith("--"):
            out += ["--weight", tok[2:]]
        else:
            out.append(tok)
    return out


#: LIBLINEAR's default -e of each solver: the dual solvers' maximal violation, the primal
#: solvers' gradient norm relative to the start's.
LIBLINEAR_TOLERANCES = {1: 0.1, 2: 0.01, 3: 0.1, 4: 0.1, 5: 0.01, 11: 0.0001, 12: 0.1, 13: 0.1}


def build_estimator(args, n_features):
    from svmkit.io.liblinear_model import SOLVERS
    from svmkit.io.libsvm_model import KERNEL_TYPES
    from svmkit import models
    from svmkit.models import SVC, SVR, NuSVC, NuSVR, OneClassSVM

    s = args.svm_type
    if s is None:  # LIBLINEAR's train defaults to -s 1, svm-train to -s 0
        s = 1 if getattr(args, "linear", False) else 0
    if not np.isfinite(getattr(args, "bias", -1.0)):  # grid's options have no -B
        raise ValueError(f"-B takes a finite number, got -B {args.bias:g}")
    if getattr(args, "linear", False):
        if s not in SOLVERS:
            raise ValueError(f"--linear -s {s}: svmkit builds LIBLINEAR's solvers {sorted(SOLVERS)}")
        _, model, params = SOLVERS[s]
        linear = dict(C=args.cost, tol=LIBLINEAR_TOLERANCES[s] if args.tolerance is None else args.tolerance,
                      fit_intercept=args.bias > 0, intercept_scaling=args.bias if args.bias > 0 else 1.0,
                      random_state=0, **params)
        if model is models.LinearSVR:
            return model(epsilon=args.epsilon, **linear)
        return model(class_weight=_class_weight(args.weight), **linear)
    if s not in range(5):
        raise ValueError(f"-s {s}: svm_type must be 0-4 (C-SVC, nu-SVC, one-class SVM, epsilon-SVR, nu-SVR); "
                         "LIBLINEAR's solver numbers need --linear")
    kernel = list(KERNEL_TYPES.values())[args.kernel_type]  # -t codes in the order of LIBSVM's table
    # svm-train: gamma 0 means 1/num_features
    gamma = args.gamma if args.gamma != 0 else 1.0 / max(n_features, 1)
    tol = 0.001 if args.tolerance is None else args.tolerance
    # -m unset: the estimators' own cache (svm-train's 100 MB recomputes kernel rows on larger sets)
    cache = {} if args.cache_size is None else {"cache_size": args.cache_size}
    common = dict(kernel=kernel, degree=args.degree, gamma=gamma, coef0=args.coef0, tol=tol,
                  shrinking=bool(args.shrinking), verbose=not args.quiet, probability=bool(args.probability),
                  **cache)
    if s == 0:
        return SVC(C=args.cost, class_weight=_class_weight(args.weight), **common)
    if s == 1:  # svm-train's nu-SVC ignores -w (solve_nu_svc takes no C), and so does NuSVC
        if args.weight and not args.quiet:
            print("Warning: -w has no effect on nu-SVC (-s 1), as in svm-train; -s 0 weighs C by class",
                  file=sys.stderr)
        return NuSVC(nu=args.nu, **common)
    if s == 2:
        return OneClassSVM(nu=args.nu, **common)
    if s == 3:
        return SVR(C=args.cost, epsilon=args.epsilon, **common)
    return NuSVR(nu=args.nu, C=args.cost, **common)


def _class_weight(pairs):
    weights = {}
    for label, value in pairs:
        try:
            weights[int(label)] = float(value)
        except ValueError:
            raise ValueError(f"-w{label} {value}: a class weight needs an integer label and a number") from None
    return weights or None


def _check_class_labels(y):
    bad = y[y != np.round(y)]
    if bad.size:
        raise ValueError(f"classification needs integer class labels; the training file has {bad[0]:g}")


def _kernel_columns(X, ids):
    """The training Gram matrix from svm-train's precomputed rows: column `0:id` names each row's
    training point, so K[i, k] is row i's value at index id_k."""
    if ids is None:
        return X
    if np.any(ids != np.round(ids)) or ids.min() < 1 or ids.max() > X.shape[1]:
        raise ValueError(f"precomputed kernel: every row needs 0:ID with an integer ID in 1..{X.shape[1]}, "
                         "the number of kernel columns")
    return X[:, ids.astype(np.int64) - 1]


def cross_validate(est, K, y, folds, quiet):
    """svm-train -v: predictions of each fold's model on its held-out rows, then LIBSVM's summary.
    A precomputed kernel is cut to the fold's training columns; with -b 1 a classifier predicts
    the class of highest probability, as svm-train does."""
    from sklearn.model_selection import KFold, StratifiedKFold

    from svmkit.models import SVR, LinearSVR, NuSVR, OneClassSVM

    regression = isinstance(est, (SVR, NuSVR, LinearSVR))
    if folds < 2:
        raise ValueError(f"-v {folds}: n-fold cross validation needs n >= 2")
    splitter = (KFold if regression or isinstance(est, OneClassSVM) else StratifiedKFold)(
        folds, shuffle=True, random_state=0)
    pred = np.empty(y.shape[0])
    splits = list(splitter.split(K, y))
    precomputed = getattr(est, "kernel", None) == "precomputed"
    for train, test in progress(splits, "cross validation", "fold", quiet):
        cols = train if precomputed else slice(None)
        est.fit(K[train][:, cols], y[train])
        by_probability = getattr(est, "probability", False) and not regression and not isinstance(est, OneClassSVM)
        pred[test] = (est.predict_by_probability if by_probability else est.predict)(K[test][:, cols])
    if regression:
        return regression_lines(y, pred, prefix="Cross Validation ")
    return [accuracy_line(y, pred, prefix="Cross Validation ")]


def libsvm_class_order(classes, y_enc):
    """svm-train's class order: first appearance in the data, except that two classes −1, +1
    are put +1 first. Returns the classes in that order and y re-encoded."""
    first = np.full(classes.size, y_enc.size)
    np.minimum.at(first, y_enc, np.arange(y_enc.size))
    order = np.argsort(first, kind="stable")
    if classes.size == 2 and classes[order].tolist() == [-1, 1]:
        order = order[::-1]
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return classes[order], rank[y_enc]


def fit_in_libsvm_order(est, X, y):
    """Fit a classifier with svm-train's class order, so that its pairs, rho signs and `label`
    line read as svm-train's: the estimator is fitted on each label's rank in that order
    (class weights re-keyed alike) and then given the labels back as `classes_`."""
    from svmkit._validation import check_class_weight_labels

    order, ranks = libsvm_class_order(*np.unique(y, return_inverse=True))
    rank_of = {label: k for k, label in enumerate(order.tolist())}
    weights = est.class_weight
    if weights:
        check_class_weight_labels(weights, order)
        est.set_params(class_weight={rank_of[label]: w for label, w in weights.items()})
    try:
        est.fit(X, ranks)
    finally:
        est.set_params(class_weight=weights)
    est.classes_ = order


def run(args) -> int:
    if args.linear and args.format == "native":
        raise ValueError("--format native holds kernel models; a --linear model is written as a LIBLINEAR file")
    model_file = args.model_file or os.path.basename(args.training_file) + ".model"
    check_outputs(None if args.cross_validation is not None else model_file)
    check_inputs(args.training_file)
    from svmkit.io import libsvm_model, liblinear_model, native
    from svmkit.io.state import index_precomputed_support
    from svmkit.models import SVC, LinearSVC, NuSVC

    X, y, ids = read_data(args.training_file, precomputed=args.kernel_type == 4 and not args.linear)
    est = build_estimator(args, X.shape[1])
    classifier = isinstance(est, (SVC, NuSVC, LinearSVC))
    if classifier:
        _check_class_labels(y)
    K = _kernel_columns(X, ids)
    if args.cross_validation is not None:
        for line in cross_validate(est, K, y, args.cross_validation, args.quiet):
            print(line)
        return 0
    if args.linear:
        est.fit(K, y)
        liblinear_model.save_liblinear_model(est, model_file)
        return 0
    with gap_progress(args.quiet):
        if classifier and args.format == "libsvm":
            fit_in_libsvm_order(est, K, y)
        else:
            est.fit(K, y)
    if ids is not None:
        index_precomputed_support(est, ids, X.shape[1])
    if classifier and not args.quiet:
        print(f"Total nSV = {est.support_.size}")
    if args.format == "native":
        native.save(est, model_file)
    else:
        libsvm_model.save_libsvm_model(est, model_file)
    return 0
