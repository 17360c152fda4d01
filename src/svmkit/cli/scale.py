"""`svmkit scale [-l lower] [-u upper] [-y y_lower y_upper] [-s save_filename] [-r restore_filename]
filename`: svm-scale's flags and output (the scaled data on stdout, `%g` values, zeros omitted)."""

from __future__ import annotations

import math
import sys

import numpy as np

from svmkit.cli.common import check_inputs, check_outputs, number

#: The largest feature index `svmkit scale` takes. Like svm-scale it holds each feature's
#: minimum and maximum up to the largest index (here a few float64 arrays of that length, 1 GiB
#: at this limit), so an index of 2,000,000,000 would need tens of GiB; the limit names it instead.
MAX_FEATURES = 2**25


#: svm-scale's usage text (LIBSVM 3.37).
USAGE = """\
Usage: svmkit scale [options] data_filename
options:
-l lower : x scaling lower limit (default -1)
-u upper : x scaling upper limit (default +1)
-y y_lower y_upper : y scaling limits (default: no y scaling)
-s save_filename : save scaling parameters to save_filename
-r restore_filename : restore scaling parameters from restore_filename
-h, --help : every option in full
"""


def add_parser(sub):
    p = sub.add_parser("scale", help="scale a LIBSVM data file to a range (svm-scale's options)",
                       usage="svmkit scale [options] data_filename", libsvm_usage=USAGE)
    p.add_argument("-l", "--lower", type=number, default=-1.0, help="x scaling lower limit (default -1)")
    p.add_argument("-u", "--upper", type=number, default=1.0, help="x scaling upper limit (default +1)")
    p.add_argument("-y", "--y-range", type=number, nargs=2, metavar=("Y_LOWER", "Y_UPPER"),
                   help="y scaling limits (default: no y scaling)")
    p.add_argument("-s", "--save", metavar="SAVE_FILENAME", help="save scaling parameters to save_filename")
    p.add_argument("-r", "--restore", metavar="RESTORE_FILENAME",
                   help="restore scaling parameters from restore_filename")
    p.add_argument("data_filename")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.save and args.restore:
        raise ValueError("cannot use -r and -s simultaneously")
    limits = [args.lower, args.upper, *(args.y_range or ())]
    if not all(math.isfinite(v) for v in limits):
        raise ValueError(f"-l, -u and -y take finite numbers, got {' '.join(format(v, 'g') for v in limits)}")
    check_outputs(args.save)
    check_inputs(*filter(None, (args.restore, args.data_filename)))
    if args.restore:
        _check_range_width(args.restore)
    # scikit-learn and the compiled core: only when the command runs
    from svmkit.io.data import format_rows, load_svmlight, pad_columns
    from svmkit.preprocessing import LibsvmScaler

    X, y = load_svmlight(args.data_filename)
    _check_width(X, args.data_filename)
    if args.restore:
        # svm-scale's width: the larger of the range file's last index and the data's
        scaler = LibsvmScaler.load_range(args.restore)
        if X.shape[1] > scaler.n_features_in_:
            scaler = LibsvmScaler.load_range(args.restore, n_features=X.shape[1])
        X = pad_columns(X, scaler.n_features_in_)
    else:
        y_lower, y_upper = args.y_range if args.y_range else (None, None)
        if args.lower >= args.upper:
            raise ValueError(f"-l {args.lower:g} -u {args.upper:g}: inconsistent lower/upper specification")
        scaler = LibsvmScaler(lower=args.lower, upper=args.upper, y_lower=y_lower, y_upper=y_upper).fit(X, y)
    if args.save:
        scaler.save_range(args.save)
    ys = scaler.transform_target(y) if hasattr(scaler, "y_min_") else y
    sys.stdout.writelines(format_rows(scaler.transform(X), [format(v, "g") for v in ys], lambda v: format(v, "g"),
                                      trailing_space=True))
    return 0


def _limit_error(where, index):
    return ValueError(f"{where}: feature index {index} is beyond svmkit scale's limit of {MAX_FEATURES} "
                      "(the ranges are held for every index up to the largest); renumber the features, or scale "
                      "in Python with a sparse scaler such as sklearn.preprocessing.MaxAbsScaler")


def _check_width(X, path):
    """Refuse data whose largest feature index is beyond MAX_FEATURES, naming its row."""
    if X.shape[1] > MAX_FEATURES:
        row = int(np.searchsorted(X.indptr, np.argmax(X.indices), side="right"))  # 1-based row of the index
        raise _limit_error(f"{path}, data row {row}", X.shape[1])


def _check_range_width(path):
    """Refuse a range file listing a feature index beyond MAX_FEATURES, naming its line."""
    from svmkit.io.range_file import read_range

    _, _, rows = read_range(path)
    if rows and rows[-1][1] > MAX_FEATURES:
        raise _limit_error(f"{path}, line {rows[-1][0]}", rows[-1][1])
