"""`svmkit train [options] training_file [model_file]`: svm-train's flags, defaults, console
summary and model file; `--format native` writes svmkit's own file instead."""

from __future__ import annotations

import os
import sys

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from tqdm import tqdm

from svmkit.cli.common import read_data
from svmkit.cli.report import accuracy_line, regression_lines
from svmkit.io.libsvm_model import save_libsvm_model
from svmkit.models import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from svmkit.models.state import relabel_classes

SVM_TYPES = {0: SVC, 1: NuSVC, 2: OneClassSVM, 3: SVR, 4: NuSVR}
KERNEL_TYPES = {0: "linear", 1: "poly", 2: "rbf", 3: "sigmoid", 4: "precomputed"}
_REGRESSION = (3, 4)


def add_parser(sub):
    p = sub.add_parser(
        "train", add_help=False, help="train a model from a LIBSVM data file (svm-train's options)",
        usage="svmkit train [options] training_file [model_file]",
        description="svm_type -s: 0 C-SVC, 1 nu-SVC, 2 one-class SVM, 3 epsilon-SVR, 4 nu-SVR; "
                    "kernel_type -t: 0 linear, 1 polynomial, 2 radial basis function, 3 sigmoid, "
                    "4 precomputed kernel.")
    p.add_argument("--help", action="help", help="show this help and exit")
    p.add_argument("-s", "--svm-type", type=int, choices=sorted(SVM_TYPES), default=0, help="(default 0)")
    p.add_argument("-t", "--kernel-type", type=int, choices=sorted(KERNEL_TYPES), default=2, help="(default 2)")
    p.add_argument("-d", "--degree", type=int, default=3, help="degree in the kernel function (default 3)")
    p.add_argument("-g", "--gamma", type=float, default=0.0, help="gamma in the kernel (default 1/num_features)")
    p.add_argument("-r", "--coef0", type=float, default=0.0, help="coef0 in the kernel (default 0)")
    p.add_argument("-c", "--cost", type=float, default=1.0, help="C of C-SVC, epsilon-SVR, nu-SVR (default 1)")
    p.add_argument("-n", "--nu", type=float, default=0.5, help="nu of nu-SVC, one-class SVM, nu-SVR (default 0.5)")
    p.add_argument("-p", "--epsilon", type=float, default=0.1, help="epsilon of epsilon-SVR's loss (default 0.1)")
    p.add_argument("-m", "--cache-size", type=float, default=100.0, help="cache memory in MB (default 100)")
    p.add_argument("-e", "--tolerance", type=float, default=0.001, help="stopping tolerance (default 0.001)")
    p.add_argument("-h", "--shrinking", type=int, choices=(0, 1), default=1, help="use shrinking (default 1)")
    p.add_argument("-b", "--probability", type=int, choices=(0, 1), default=0,
                   help="train for probability estimates (default 0)")
    p.add_argument("-w", "--weight", nargs=2, action="append", default=[], metavar=("LABEL", "WEIGHT"),
                   help="C of class LABEL is WEIGHT*C; svm-train's -wLABEL WEIGHT works too")
    p.add_argument("-v", "--cross-validation", type=int, metavar="N", help="N-fold cross validation only")
    p.add_argument("-q", "--quiet", action="store_true", help="quiet mode (no output)")
    p.add_argument("--format", choices=("libsvm", "native"), default="libsvm", help="model file format")
    p.add_argument("training_file")
    p.add_argument("model_file", nargs="?")
    p.set_defaults(run=run)


def split_weight_flags(argv):
    """svm-train's -wLABEL WEIGHT (e.g. -w-1 2.5) as --weight LABEL WEIGHT."""
    out = []
    for tok in argv:
        if tok.startswith("-w") and len(tok) > 2 and not tok.startswith("--"):
            out += ["--weight", tok[2:]]
        else:
            out.append(tok)
    return out


def build_estimator(args, n_features):
    if args.probability:
        raise ValueError("-b 1: probability estimates are not available in this version of svmkit")
    kernel = KERNEL_TYPES[args.kernel_type]
    # svm-train: gamma 0 means 1/num_features
    gamma = args.gamma if args.gamma != 0 else 1.0 / max(n_features, 1)
    common = dict(kernel=kernel, degree=args.degree, gamma=gamma, coef0=args.coef0, tol=args.tolerance,
                  shrinking=bool(args.shrinking), cache_size=args.cache_size, verbose=not args.quiet)
    s = args.svm_type
    if s == 0:
        return SVC(C=args.cost, class_weight=_class_weight(args.weight), **common)
    if s == 1:
        return NuSVC(nu=args.nu, class_weight=_class_weight(args.weight), **common)
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


def cross_validate(est, X, y, folds, quiet):
    """svm-train -v: predictions of each fold's model on its held-out rows, then LIBSVM's summary."""
    regression = isinstance(est, (SVR, NuSVR))
    if folds < 2:
        raise ValueError(f"-v {folds}: n-fold cross validation needs n >= 2")
    splitter = (KFold if regression or isinstance(est, OneClassSVM) else StratifiedKFold)(
        folds, shuffle=True, random_state=0)
    pred = np.empty(y.shape[0])
    splits = list(splitter.split(X, y))
    for train, test in tqdm(splits, desc="cross validation", unit="fold", file=sys.stderr,
                            disable=quiet or not sys.stderr.isatty()):
        pred[test] = est.fit(X[train], y[train]).predict(X[test])
    if regression:
        return regression_lines(y, pred, prefix="Cross Validation ")
    return [accuracy_line(y, pred, prefix="Cross Validation ")]


def fit_in_label_order(est, X, y):
    """Fit a classifier with svm-train's class order, the order of first appearance in the file,
    so that class pairs, the signs of rho and decision values, the printed summary and the model
    file's `label` line are svm-train's: the labels are coded 0, 1, … in that order for the fit
    and put back after it."""
    labels, first = np.unique(y, return_index=True)
    order = labels[np.argsort(first)]
    code = np.empty(labels.size, dtype=np.int64)
    code[np.argsort(first)] = np.arange(labels.size)
    y_code = code[np.searchsorted(labels, y)]
    if est.class_weight:
        unknown = [k for k in est.class_weight if k not in set(labels.tolist())]
        if unknown:
            raise ValueError(f"-w: class {unknown[0]:g} is not a label of the training file")
        est.set_params(class_weight={int(code[np.searchsorted(labels, k)]): w for k, w in est.class_weight.items()})
    est.fit(X, y_code)
    relabel_classes(est, order)


def run(args) -> int:
    precomputed = args.kernel_type == 4
    X, y = read_data(args.training_file, precomputed)
    est = build_estimator(args, X.shape[1])
    if args.cross_validation is not None:
        for line in cross_validate(est, X, y, args.cross_validation, args.quiet):
            print(line)
        return 0
    if isinstance(est, (SVC, NuSVC)):
        fit_in_label_order(est, X, y)
        if not args.quiet:
            print(f"Total nSV = {est.support_.size}")
    else:
        est.fit(X, y)
    model_file = args.model_file or os.path.basename(args.training_file) + ".model"
    if args.format == "native":
        est.save(model_file)
    else:
        save_libsvm_model(est, model_file)
    return 0
