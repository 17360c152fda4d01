"""`svmkit predict [-b 0|1] [-q] test_file model_file output_file`: svm-predict's output file
(one `%.17g` prediction per line) and its console line."""

from __future__ import annotations

import numpy as np

from svmkit.cli.common import fit_width, read_data, read_model, refuse_probability
from svmkit.cli.progress import progress
from svmkit.cli.report import accuracy_line, regression_lines
from svmkit.io.atomic import atomic_write

#: Rows predicted per step of the progress bar.
_CHUNK = 4096


def add_parser(sub):
    p = sub.add_parser("predict", help="predict a LIBSVM data file with a model (svm-predict's options)",
                       usage="svmkit predict [options] test_file model_file output_file")
    p.add_argument("-b", "--probability", type=int, choices=(0, 1), default=0,
                   help="predict probability estimates (default 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="quiet mode (no outputs)")
    p.add_argument("test_file")
    p.add_argument("model_file")
    p.add_argument("output_file")
    p.set_defaults(run=run)


def run(args) -> int:
    from svmkit.models import SVR, NuSVR  # scikit-learn and Numba: only when the command runs

    refuse_probability(args.probability)
    est = read_model(args.model_file)
    X, y, _ = read_data(args.test_file, precomputed=est.kernel == "precomputed")
    est, X = fit_width(est, X)
    steps = range(0, X.shape[0], _CHUNK)
    bar = progress(steps, "predict", "block", args.quiet)
    pred = np.concatenate([est.predict(X[s:s + _CHUNK]) for s in bar]) if X.shape[0] else np.empty(0)
    with atomic_write(args.output_file) as fh:
        fh.writelines(f"{float(v):.17g}\n" for v in pred)
    if not args.quiet:
        lines = regression_lines(y, pred) if isinstance(est, (SVR, NuSVR)) else [accuracy_line(y, pred)]
        print("\n".join(lines))
    return 0
