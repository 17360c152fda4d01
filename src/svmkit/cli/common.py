"""What the subcommands share: reading data files as LIBSVM does, and reading any model file
(svmkit's, LIBSVM's, LIBLINEAR's)."""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

# The readers and the models are imported in the functions that use them, so that importing
# this module (every command does, to build its parser) loads neither scikit-learn nor the compiled core.


def number(text: str) -> float:
    """An option's real value: what float() reads, NaN refused (it orders against nothing, so
    it would pass every range check and reach the model)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (NaN)")
    return value


def release_workers():
    """Stop joblib's reusable worker processes: the commands end with os._exit, and workers left
    idle would hold the standard streams open, so that a reader of our output waits on them."""
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)


def check_outputs(*paths):
    """Fail before any work when one of the files a command will write (None: not asked for)
    cannot be written."""
    from svmkit.io.atomic import check_writable

    for path in paths:
        if path is not None:
            check_writable(path)


def check_inputs(*paths):
    """Fail before loading scikit-learn and the compiled core (slow to import) when one of the files
    a command reads cannot be opened."""
    for path in paths:
        with open(path, "rb"):
            pass


def read_data(path, precomputed=False):
    """(X, y, ids) from a LIBSVM data file. With a precomputed kernel each row is `0:ID 1:K(x, x_1)
    2:K(x, x_2) …`: X holds the kernel columns and ids the IDs; otherwise ids is None."""
    import scipy.sparse as sp

    from svmkit.io.data import load_svmlight

    if not precomputed:
        return (*load_svmlight(path), None)
    X, y = load_svmlight(path, zero_based=True)
    X = X.toarray() if sp.issparse(X) else X
    return np.ascontiguousarray(X[:, 1:]), y, X[:, 0]


def read_model(path):
    """An estimator from svmkit's native file or a LIBSVM model file, told apart by the signature."""
    from svmkit.io.liblinear_model import SIGNATURE, load_liblinear_model
    from svmkit.io.libsvm_model import load_libsvm_model
    from svmkit.io.native import MAGIC, load

    with open(path, "rb") as fh:
        start = fh.read(max(len(MAGIC), len(SIGNATURE)))
    if start.startswith(MAGIC):
        return load(path)
    return load_liblinear_model(path) if start.startswith(SIGNATURE.encode()) else load_libsvm_model(path)


def fit_width(est, X):
    """Make X and the model agree on the number of features as LIBSVM does: missing trailing
    features are zeros; features the model never saw widen its support vectors (they still
    count in an RBF distance). A precomputed kernel keeps only the columns the model uses."""
    from svmkit.io.data import pad_columns
    from svmkit.io.state import widen_features

    n = est.n_features_in_
    if X.shape[1] > n:
        print(f"Warning: the data has {X.shape[1]} features, the model {n}: "
              + ("the extra kernel columns are ignored" if getattr(est, "kernel", None) == "precomputed"
                 else "the extra features are ignored" if not hasattr(est, "kernel")
                 else "the extra features count in the kernel as LIBSVM's (zero in every support vector)"),
              file=sys.stderr)
    if not hasattr(est, "kernel"):  # a linear model: LIBLINEAR ignores features past nr_feature
        return est, (pad_columns(X, n) if X.shape[1] < n else X[:, :n])
    if X.shape[1] < n:
        return est, pad_columns(X, n)
    if X.shape[1] > n:
        return (est, X[:, :n]) if est.kernel == "precomputed" else (widen_features(est, X.shape[1]), X)
    return est, X
