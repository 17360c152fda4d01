"""LIBLINEAR model files (liblinear's `train` output) for the linear SVMs, read and written as
LIBLINEAR 2.47 does: `solver_type`, `nr_class`, `label` (classifiers), `nr_feature`, `bias`,
then `w` and one line per feature (and the bias feature when bias ≥ 0) of %.17g weights, one
per class column (one column for two classes, except for Crammer–Singer, and for regression).

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
from svmkit.models.linear.svm import LinearSVC, LinearSVR

#: LIBLINEAR's solvers that svmkit builds, by their -s number: the name a model file gives it,
#: the estimator, and the parameters that choose it there.
SOLVERS = {1: ("L2R_L2LOSS_SVC_DUAL", LinearSVC, {"loss": "squared_hinge", "dual": True}),
           2: ("L2R_L2LOSS_SVC", LinearSVC, {"loss": "squared_hinge", "dual": False}),
           3: ("L2R_L1LOSS_SVC_DUAL", LinearSVC, {"loss": "hinge", "dual": True}),
           4: ("MCSVM_CS", LinearSVC, {"multi_class": "crammer_singer"}),
           5: ("L1R_L2LOSS_SVC", LinearSVC, {"penalty": "l1", "loss": "squared_hinge", "dual": False}),
           11: ("L2R_L2LOSS_SVR", LinearSVR, {"loss": "squared_epsilon_insensitive", "dual": False}),
           12: ("L2R_L2LOSS_SVR_DUAL", LinearSVR, {"loss": "squared_epsilon_insensitive", "dual": True}),
           13: ("L2R_L1LOSS_SVR_DUAL", LinearSVR, {"loss": "epsilon_insensitive", "dual": True})}
#: The header line that starts every LIBLINEAR model file.
SIGNATURE = "solver_type "


def save_liblinear_model(est, path) -> None:
    """Write a fitted LinearSVC or LinearSVR as liblinear's train would, atomically, under the
    name of the solver that fitted it (`solver_`). A Crammer–Singer model keeps a column per
    class, also for two classes: w₀ = −d/2 and w₁ = d/2 for the model's d = w₁ − w₀, as the
    solution has them (its columns sum to zero, and LIBLINEAR predicts two classes from w₀)."""
    name = type(est).__name__
    if not isinstance(est, (LinearSVC, LinearSVR)):
        raise ValueError(f"cannot write a {name} as a LIBLINEAR model: LIBLINEAR files hold LinearSVC and LinearSVR")
    if not hasattr(est, "coef_"):
        raise ValueError(f"cannot save an unfitted {name}: call fit first")
    solver = getattr(est, "solver_", None)
    if solver not in SOLVERS:
        raise ValueError(f"cannot write this {name} as a LIBLINEAR model: it has no solver_ (LIBLINEAR's solver "
                         "that fitted it), which a model fitted by an earlier svmkit lacks; fit it again")
    bias = float(est.intercept_scaling) if est.fit_intercept else -1.0
    W = np.atleast_2d(est.coef_)
    b = np.broadcast_to(np.ravel(est.intercept_), W.shape[:1])
    lines = [f"solver_type {SOLVERS[solver][0]}"]
    if isinstance(est, LinearSVC):
        labels = np.asarray(est.classes_)
        if labels.dtype.kind not in "iuf" or not np.all(labels == np.round(labels)):
            raise ValueError(f"LIBLINEAR model files need integer class labels, got classes_={labels.tolist()}")
        if labels.size == 2 and solver == 4:
            W, b = np.vstack([-W, W]) / 2, np.r_[-b, b] / 2
            order = labels
        else:
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
    """Read a LIBLINEAR model file of one of the solvers svmkit builds (`SOLVERS`) into a
    LinearSVC or LinearSVR with that solver's parameters."""
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
    known = {file_name: (number, model, params) for number, (file_name, model, params) in SOLVERS.items()}
    if solver not in known:
        _fail(path, 1, f"solver_type {solver!r} is not one svmkit builds ({sorted(known)})")
    number, model, params = known[solver]
    name = model.__name__
    n_rows = nr_feature + (bias >= 0)
    n_cols = nr_class if name == "LinearSVC" and (nr_class > 2 or number == 4) else 1
    try:
        W = np.array([[float(v) for v in lines[first + k].split()] for k in range(n_rows)])
    except (IndexError, ValueError):
        _fail(path, first + 1, f"expected {n_rows} weight lines of {n_cols} numbers")
    if W.shape != (n_rows, n_cols):
        _fail(path, first + 1, f"expected {n_rows} weight lines of {n_cols} numbers, found shape {W.shape}")
    if not np.isfinite(W).all():
        _fail(path, first + 1 + int(np.argwhere(~np.isfinite(W))[0, 0]), "a weight that is not a finite number")
    est = model(**params, fit_intercept=bias >= 0, intercept_scaling=bias if bias > 0 else 1.0)
    coef, intercept = W[:nr_feature].T, (W[nr_feature] * bias if bias >= 0 else np.zeros(n_cols))
    est.n_features_in_ = nr_feature
    est.solver_ = number
    if name == "LinearSVC":
        lineno, words = header.get("label", (first, []))
        try:
            labels = np.array([int(v) for v in words])
        except ValueError:
            _fail(path, lineno, f"labels {' '.join(words)[:60]!r} are not all integers")
        if labels.size != nr_class or np.unique(labels).size != nr_class:
            _fail(path, lineno, f"a classifier needs a label line with nr_class = {nr_class} distinct values")
        if nr_class == 2 and number == 4:  # a column per class: the model's one is w₁ − w₀
            est.classes_, coef, intercept = labels, coef[1:] - coef[:1], intercept[1:] - intercept[:1]
        else:
            est.classes_ = labels[::-1] if nr_class == 2 else labels
        est.coef_, est.intercept_ = coef, intercept
    else:
        est.coef_, est.intercept_ = coef[0], intercept[:1]
    return est
