"""LIBSVM model files (svm-train's output), read and written exactly as LIBSVM 3.37 does.

Header lines in svm_save_model's order (svm_type, kernel_type, degree, gamma, coef0, nr_class,
total_sv, rho, label, probA, probB, prob_density_marks, nr_sv), then `SV` and one line per
support vector: its nr_class − 1 coefficients (`%.17g`) and its nonzero features as
`index:value` (`%.8g`, 1-based), or `0:i` (the training row) for a precomputed kernel.

A loaded classifier keeps LIBSVM's label order as `classes_`, so its class pairs, decision
values and vote ties are LIBSVM's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from svmkit.io.atomic import atomic_write
from svmkit.io.data import format_rows
from svmkit.exceptions import ModelFileError
from svmkit.io.state import ESTIMATORS, set_state

SVM_TYPES = {"c_svc": "SVC", "nu_svc": "NuSVC", "one_class": "OneClassSVM", "epsilon_svr": "SVR",
             "nu_svr": "NuSVR"}
KERNEL_TYPES = {"linear": "linear", "polynomial": "poly", "rbf": "rbf", "sigmoid": "sigmoid",
                "precomputed": "precomputed"}
_CLASSIFIERS = ("c_svc", "nu_svc")
_FLOAT_LISTS = ("rho", "probA", "probB", "prob_density_marks")
#: How each header keyword's values are read.
_HEADER = {"svm_type": lambda v: v[0], "kernel_type": lambda v: v[0], "degree": lambda v: int(v[0]),
           "nr_class": lambda v: int(v[0]), "total_sv": lambda v: int(v[0]), "gamma": lambda v: float(v[0]),
           "coef0": lambda v: float(v[0]), "label": lambda v: [int(x) for x in v],
           "nr_sv": lambda v: [int(x) for x in v], **{k: (lambda v: [float(x) for x in v]) for k in _FLOAT_LISTS}}


def _g17(values) -> str:
    return " ".join(format(float(v), ".17g") for v in np.ravel(values))


def save_libsvm_model(est, path) -> None:
    """Write a fitted SVC, NuSVC, SVR, NuSVR or OneClassSVM as svm-train would, atomically."""
    name = type(est).__name__
    svm_type = {v: k for k, v in SVM_TYPES.items()}.get(name)
    if svm_type is None:
        raise ValueError(f"cannot write a {name} as a LIBSVM model: LIBSVM holds {sorted(SVM_TYPES.values())}")
    if not hasattr(est, "support_"):
        raise ValueError(f"cannot save an unfitted {name}: call fit first")
    kernel = {v: k for k, v in KERNEL_TYPES.items()}.get(est.kernel) if isinstance(est.kernel, str) else None
    if kernel is None:
        raise ValueError(f"LIBSVM model files cannot hold kernel={est.kernel!r}")
    lines = [f"svm_type {svm_type}", f"kernel_type {kernel}"]
    if kernel == "polynomial":
        lines.append(f"degree {int(est.degree)}")
    if kernel in ("polynomial", "rbf", "sigmoid"):
        lines.append(f"gamma {_g17(est.gamma_)}")
    if kernel in ("polynomial", "sigmoid"):
        lines.append(f"coef0 {_g17(est.coef0)}")
    classifier = svm_type in _CLASSIFIERS
    nr_class = len(est.classes_) if classifier else 2
    sv_coef, rho = est.libsvm_expansion()
    lines += [f"nr_class {nr_class}", f"total_sv {est.support_.size}", f"rho {_g17(rho)}"]
    if classifier:
        labels = np.asarray(est.classes_)
        if labels.dtype.kind not in "iuf" or not np.all(labels == np.round(labels)):
            raise ValueError(f"LIBSVM model files need integer class labels, got classes_={labels.tolist()}")
        lines.append("label " + " ".join(str(int(v)) for v in labels))
    for key in _FLOAT_LISTS[1:]:
        if np.size(getattr(est, f"{key}_", ())):
            lines.append(f"{key} {_g17(getattr(est, f'{key}_'))}")
    if classifier:
        lines.append("nr_sv " + " ".join(str(int(v)) for v in est.n_support_))
    lines.append("SV")
    with atomic_write(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
        fh.writelines(_sv_lines(est, sv_coef))


def _sv_lines(est, coef):
    heads = [" ".join(format(v, ".17g") for v in col) for col in coef.T]
    if est.kernel == "precomputed":
        return [f"{head} 0:{int(i) + 1} \n" for head, i in zip(heads, est.support_)]
    return format_rows(est.support_vectors_, heads, lambda v: format(v, ".8g"), trailing_space=True)


def _fail(path, lineno, message):
    raise ModelFileError(f"{path}, line {lineno}: {message}")


def _read_header(path, lines):
    header = {}
    for lineno, line in enumerate(lines, 1):
        key, _, rest = line.strip().partition(" ")
        if key == "SV":
            return header, lineno
        if not key:
            continue
        values = rest.split()
        parse = _HEADER.get(key)
        if parse is None:
            _fail(path, lineno, f"unknown keyword {key[:40]!r}: not a LIBSVM model file header")
        try:
            header[key] = parse(values)
        except (IndexError, ValueError):
            _fail(path, lineno, f"bad value for {key}: {rest.strip()[:60]!r}")
    _fail(path, len(lines), "no 'SV' line: the file ends before the support vectors")


def _read_svs(path, lines, first, n_coef, total):
    coef = np.empty((total, n_coef))
    rows, cols, vals = [], [], []
    body = lines[first:first + total]
    if len(body) < total:
        _fail(path, first + len(body), f"expected {total} support vectors (total_sv), found {len(body)}")
    for r, line in enumerate(body):
        lineno = first + r + 1
        tokens = line.split()
        try:
            coef[r] = [float(t) for t in tokens[:n_coef]]
            for t in tokens[n_coef:]:
                idx, _, val = t.partition(":")
                rows.append(r)
                cols.append(int(idx))
                vals.append(float(val))
        except ValueError:
            _fail(path, lineno, f"malformed support vector line: {line.strip()[:60]!r}")
    return coef, np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), np.asarray(vals)


def _check_counts(path, sv_line, header, classifier):
    """The header's counts must agree with each other, as svm_load_model assumes."""
    k, total = header["nr_class"], header["total_sv"]
    if k < 2 or total < 0:
        _fail(path, sv_line, f"nr_class {k} and total_sv {total}: need nr_class >= 2 and total_sv >= 0")
    if len(header["rho"]) != k * (k - 1) // 2:
        _fail(path, sv_line, f"rho has {len(header['rho'])} values; nr_class {k} needs {k * (k - 1) // 2}")
    if not classifier:
        return
    for key in ("label", "nr_sv"):
        if len(header.get(key, ())) != k:
            _fail(path, sv_line, f"a classifier needs a {key} line with nr_class = {k} values")
    if sum(header["nr_sv"]) != total:
        _fail(path, sv_line, f"nr_sv adds up to {sum(header['nr_sv'])}, not total_sv = {total}")


def load_libsvm_model(path, n_features=None):
    """Read a LIBSVM model file into the matching svmkit estimator, ready to predict.

    `n_features` widens the support vectors to that many features (LIBSVM's RBF kernel counts
    every feature of the input, also those no support vector has).
    """
    path = Path(path)
    lines = path.read_text().splitlines()
    header, sv_line = _read_header(path, lines)
    for key in ("svm_type", "kernel_type", "nr_class", "total_sv", "rho"):
        if key not in header:
            _fail(path, sv_line, f"the header has no {key} line")
    svm_type, kernel = header["svm_type"], header["kernel_type"]
    if svm_type not in SVM_TYPES or kernel not in KERNEL_TYPES:
        _fail(path, 1, f"unknown svm_type {svm_type!r} or kernel_type {kernel!r}")
    classifier = svm_type in _CLASSIFIERS
    nr_class, total = header["nr_class"], header["total_sv"]
    _check_counts(path, sv_line, header, classifier)
    coef, rows, cols, vals = _read_svs(path, lines, sv_line, nr_class - 1, total)
    params = {"kernel": KERNEL_TYPES[kernel]}
    for key in ("degree", "gamma", "coef0"):
        if key in header:
            params[key] = header[key]
    params["probability"] = any(key in header for key in _FLOAT_LISTS[1:])
    est = ESTIMATORS[SVM_TYPES[svm_type]](**params)
    precomputed = kernel == "precomputed"
    if precomputed:
        support = vals.astype(np.int64) - 1
        width = int(support.max()) + 1 if support.size else 0
        sv = np.empty((0, 0))
    else:
        if cols.size and cols.min() < 1:
            _fail(path, sv_line + 1, "feature indices must be >= 1")
        width = max(int(cols.max()) if cols.size else 0, n_features or 0)
        sv = sp.csr_matrix((vals, (rows, cols - 1)), shape=(total, width))
        support = np.arange(total)
    state = {"support_": support.astype(np.int32), "support_vectors_": sv, "_dual_coef_": coef.T.copy(),
             "_intercept_": -np.asarray(header["rho"]), "gamma_": header.get("gamma", 1.0),
             "n_features_in_": width, "shape_fit_": (width, width) if precomputed else (total, width),
             "fit_status_": 0}
    if classifier:
        state["classes_"] = np.asarray(header["label"])
        state["n_support_"] = np.asarray(header["nr_sv"], dtype=np.int32)
    else:
        state["n_support_"] = np.array([total], dtype=np.int32)
    if svm_type == "one_class":
        state["offset_"] = header["rho"][0]
    for key in _FLOAT_LISTS[1:]:
        if key in header:
            state[f"{key}_"] = np.asarray(header[key])
    return set_state(est, {k: v if sp.issparse(v) else np.asarray(v) for k, v in state.items()})
