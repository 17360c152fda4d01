"""`svmkit predict [-b 0|1] [-q] test_file model_file output_file`: svm-predict's output file
(one `%.17g` prediction per line) and its console line."""

from __future__ import annotations

import numpy as np

from svmkit.cli.common import check_inputs, check_outputs, fit_width, read_data, read_model
from svmkit.cli.progress import progress
from svmkit.cli.report import accuracy_line, regression_lines
from svmkit.io.atomic import atomic_write

#: Rows predicted per step of the progress bar.
_CHUNK = 4096


#: svm-predict's usage text (LIBSVM 3.37), with svmkit's additions.
USAGE = """\
Usage: svmkit predict [options] test_file model_file output_file
options:
-b probability_estimates: whether to predict probability estimates, 0 or 1 (default 0)
-q : quiet mode (no outputs)
model_file: svmkit's native file, or a LIBSVM or LIBLINEAR model file
-h, --help : every option in full
"""


def add_parser(sub):
    p = sub.add_parser("predict", help="predict a LIBSVM data file with a model (svm-predict's options)",
                       usage="svmkit predict [options] test_file model_file output_file", libsvm_usage=USAGE)
    p.add_argument("-b", "--probability", type=int, choices=(0, 1), default=0,
                   help="predict probability estimates (default 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="quiet mode (no outputs)")
    p.add_argument("test_file")
    p.add_argument("model_file")
    p.add_argument("output_file")
    p.set_defaults(run=run)


def run(args) -> int:
    check_outputs(args.output_file)
    check_inputs(args.test_file, args.model_file)
    from svmkit.models import SVR, LinearSVR, NuSVR  # scikit-learn and the compiled core: only when the command runs
    from svmkit.models.smo.calibration import LAPLACE_MODEL

    est = read_model(args.model_file)
    regression = isinstance(est, (SVR, NuSVR, LinearSVR))
    supported = probability_model(est)
    if args.probability and not supported:
        raise ValueError(f"-b 1: the model {args.model_file} does not support probability estimates "
                         "(train it with -b 1)")
    if not args.quiet and supported and not args.probability:
        print("Model supports probability estimates, but disabled in prediction.")
    X, y, _ = read_data(args.test_file, precomputed=getattr(est, "kernel", None) == "precomputed")
    est, X = fit_width(est, X)
    with_proba = bool(args.probability) and not regression
    steps = range(0, X.shape[0], _CHUNK)
    bar = progress(steps, "predict", "block", args.quiet)
    chunks = [_predict_chunk(est, X[s:s + _CHUNK], with_proba) for s in bar]
    pred = np.concatenate([c[0] for c in chunks]) if chunks else np.empty(0)
    with atomic_write(args.output_file) as fh:
        if with_proba:
            fh.write(_probability_header(est))
            for labels, proba in chunks:
                fh.writelines(f"{float(v):g} " + " ".join(f"{p:g}" for p in row) + "\n" for v, row in zip(labels, proba))
        else:
            fh.writelines(f"{float(v):.17g}\n" for v in pred)
    if not args.quiet:
        if args.probability and regression:
            print(f"{LAPLACE_MODEL}{est.probA_[0]:g}")  # svm-predict's spacing
        lines = regression_lines(y, pred) if regression else [accuracy_line(y, pred)]
        print("\n".join(lines))
    return 0


def probability_model(est) -> bool:
    """svm_check_probability_model: a classifier with probA and probB, a regressor with probA,
    a one-class model with density marks."""
    return any(np.size(getattr(est, name, ())) for name in ("probA_", "prob_density_marks_"))


def _predict_chunk(est, X, with_proba):
    """(predictions, probabilities or None): with probabilities a classifier predicts the class
    of highest probability and a one-class model its sign, as svm_predict_probability does."""
    if not with_proba:
        return est.predict(X), None
    proba = est.predict_proba(X)
    labels = est.predict(X) if not hasattr(est, "classes_") else est.classes_[np.argmax(proba, axis=1)]
    return labels, proba


def _probability_header(est) -> str:
    """svm-predict -b 1's first line: the classes in the model's order, or one-class's names."""
    if not hasattr(est, "classes_"):
        return "label normal outlier\n"
    return "labels " + " ".join(str(int(v)) for v in est.classes_) + "\n"
