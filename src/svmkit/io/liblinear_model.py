"""LIBLINEAR model files (liblinear's `train` output) for the linear SVMs, read and written as
LIBLINEAR 2.47 does: `solver_type`, `nr_class`, `label` (classifiers), `nr_feature`, `bias`,
then `w` and one line per feature (and the bias feature when bias ≥ 0) of %.17g weights, one
per class column (one column for two classes and for regression).

A two-class model's column scores LIBLINEAR's first label; the estimator keeps scikit-learn's
sorted `classes_`, so the column is signed for classes_[1].
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from svmkit.exceptions import ModelFileError
from svmkit.io.atomic import atomic_write
from svmkit.io.libsvm_model import text_lines
from svmkit.models.linear import LinearSVC, LinearSVR

#: LIBLINEAR's names of the solvers svmkit builds, by estimator and loss.
SOLVER_TYPES = {("LinearSVC", "squared_hinge"): "L2R_L2LOSS_SVC_DUAL", ("LinearSVC", "hinge"): "L2R_L1LOSS_SVC_DUAL",
                ("LinearSVR", "squared_epsilon_insensitive"): "L2R_L2LOSS_SVR_DUAL",
                ("LinearSVR", "epsilon_insensitive"): "L2R_L1LOSS_SVR_DUAL"}
#: The header line that starts every LIBLINEAR model file.
SIGNATURE = "solver_type "


def save_liblinear_model(est, path) -> None:
    """Write a fitted LinearSVC or LinearSVR as liblinear's train would, atomically."""
    name = type(est).__name__
    solver = SOLVER_TYPES.get((name, getattr(est, "loss", None)))
    if solver is None:
        raise ValueError(f"cannot write a {name} as a LIBLINEAR model: LIBLINEAR files hold LinearSVC and LinearSVR")
    if getattr(est, "penalty", "l2") != "l2" or getattr(est, "multi_class", "ovr") != "ovr":
        raise ValueError(f"cannot write a {name} with penalty={est.penalty!r}, multi_class={est.multi_class!r} as a "
                         "LIBLINEAR model: the files written hold the L2-penalised one-vs-rest solvers")
    if not hasattr(est, "coef_"):
        raise ValueError(f"cannot save an unfitted {name}: call fit first")
    bias = float(est.intercept_scaling) if est.fit_intercept else -1.0
    W = np.atleast_2d(est.coef_)
    b = np.ravel(est.intercept_)
    lines = [f"solver_type {solver}"]
    if isinstance(est, LinearSVC):
        labels = np.asarray(est.classes_)
        if labels.dtype.kind not in "iuf" or not np.all(labels == np.round(labels)):
            raise ValueError(f"LIBLINEAR model files need integer class labels, got classes_={labels.tolist()}")
        order = labels[::-1] if labels.size == 2 else labels  # two classes: LIBLINEAR's first label is +1
        lines += [f"nr_class {labels.size}", "label " + " ".join(str(int(v)) for v in order)]
    else:
        lines.append("nr_class 2")
    lines += [f"nr_feature {W.shape[1]}", f"bias {bias:.17g}", "w"]
    columns = np.vstack([W.T, b / bias]) if bias >= 0 else W.T
    with atomic_write(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
        fh.writelines(" ".join(format(v, ".17g") for v in row) + " \n" for row in columns)


def _fail(path, lineno, message):
    raise ModelFileError(f"{path}, line {lineno}: {message}")


def load_liblinear_model(path):
    """Read a LIBLINEAR model file of one of the four dual solvers into a LinearSVC or LinearSVR."""
    path = Path(path)
    lines = text_lines(path, "LIBLINEAR")
    header = {}
    for lineno, line in enumerate(lines, 1):
        key, _, rest = line.strip().partition(" ")
        if key == "w":
            break
        header[key] = (lineno, rest.split())
    else:
        _fail(path, len(lines), "no 'w' line: the file ends before the weights")
    first = lineno
    try:
        solver = header["solver_type"][1][0]
        nr_class = int(header["nr_class"][1][0])
        nr_feature = int(header["nr_feature"][1][0])
        bias = float(header["bias"][1][0])
    except (KeyError, IndexError, ValueError):
        _fail(path, first, "the header needs solver_type, nr_class, nr_feature and bias lines with values")
    if nr_class < 2 or nr_feature < 1 or not math.isfinite(bias):
        _fail(path, first, f"nr_class {nr_class} (at least 2), nr_feature {nr_feature} (at least 1) or "
                           f"bias {bias} (finite) out of range")
    known = {v: k for k, v in SOLVER_TYPES.items()}
    if solver not in known:
        _fail(path, 1, f"solver_type {solver!r} is not one svmkit builds ({sorted(known)})")
    name, loss = known[solver]
    n_rows = nr_feature + (bias >= 0)
    n_cols = nr_class if name == "LinearSVC" and nr_class > 2 else 1
    try:
        W = np.array([[float(v) for v in lines[first + k].split()] for k in range(n_rows)])
    except (IndexError, ValueError):
        _fail(path, first + 1, f"expected {n_rows} weight lines of {n_cols} numbers")
    if W.shape != (n_rows, n_cols):
        _fail(path, first + 1, f"expected {n_rows} weight lines of {n_cols} numbers, found shape {W.shape}")
    if not np.isfinite(W).all():
        _fail(path, first + 1 + int(np.argwhere(~np.isfinite(W))[0, 0]), "a weight that is not a finite number")
    est = (LinearSVC if name == "LinearSVC" else LinearSVR)(loss=loss, fit_intercept=bias >= 0,
                                                            intercept_scaling=bias if bias > 0 else 1.0)
    coef, intercept = W[:nr_feature].T, (W[nr_feature] * bias if bias >= 0 else np.zeros(n_cols))
    est.n_features_in_ = nr_feature
    if name == "LinearSVC":
        lineno, words = header.get("label", (first, []))
        try:
            labels = np.array([int(v) for v in words])
        except ValueError:
            _fail(path, lineno, f"labels {' '.join(words)[:60]!r} are not all integers")
        if labels.size != nr_class or np.unique(labels).size != nr_class:
            _fail(path, lineno, f"a classifier needs a label line with nr_class = {nr_class} distinct values")
        est.classes_ = labels[::-1] if nr_class == 2 else labels
        est.coef_, est.intercept_ = coef, intercept
    else:
        est.coef_, est.intercept_ = coef[0], intercept[:1]
    return est
