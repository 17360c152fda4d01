"""LIBSVM model files (svm-train's output), read and written exactly as LIBSVM 3.37 does.

Header lines in svm_save_model's order (svm_type, kernel_type, degree, gamma, coef0, nr_class,
total_sv, rho, label, probA, probB, prob_density_marks, nr_sv), then `SV` and one line per
support vector: its nr_class − 1 coefficients (`%.17g`) and its nonzero features as
`index:value` (`%.8g`, 1-based), or `0:i` (the training row) for a precomputed kernel.

A loaded classifier keeps LIBSVM's label order as `classes_`, so its class pairs, decision
values and vote ties are LIBSVM's.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from svmkit.io.atomic import atomic_write
from svmkit.io.data import _INDEX_MAX, format_rows, parse_feature
from svmkit.exceptions import ModelFileError
from svmkit.io.state import ESTIMATORS, set_state

SVM_TYPES = {"c_svc": "SVC", "nu_svc": "NuSVC", "one_class": "OneClassSVM", "epsilon_svr": "SVR",
             "nu_svr": "NuSVR"}
KERNEL_TYPES = {"linear": "linear", "polynomial": "poly", "rbf": "rbf", "sigmoid": "sigmoid",
                "precomputed": "precomputed"}
_CLASSIFIERS = ("c_svc", "nu_svc")
#: The header lines each kernel reads; svm_load_model leaves a missing one uninitialised.
_KERNEL_LINES = {"linear": (), "polynomial": ("degree", "gamma", "coef0"), "rbf": ("gamma",),
                 "sigmoid": ("gamma", "coef0"), "precomputed": ()}
_FLOAT_LISTS = ("rho", "probA", "probB", "prob_density_marks")
#: svm_save_model writes 10 density marks for a one-class model with probability estimates.
_DENSITY_MARKS = 10


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _one(kind):
    """A reader of a keyword's single value."""
    def read(values):
        if len(values) != 1:
            raise ValueError(f"needs one value, has {len(values)}")
        return kind(values[0])
    return read


#: How each header keyword's values are read; int() takes only whole numbers.
_HEADER = {"svm_type": _one(str), "kernel_type": _one(str), "degree": _one(int), "nr_class": _one(int),
           "total_sv": _one(int), "gamma": _one(_finite), "coef0": _one(_finite),
           "label": lambda v: [int(x) for x in v], "nr_sv": lambda v: [int(x) for x in v],
           **{k: (lambda v: [_finite(x) for x in v]) for k in _FLOAT_LISTS}}


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


def text_lines(path: Path, kind: str) -> list[str]:
    """The lines of a model file, or a ModelFileError naming the first byte that is not UTF-8."""
    blob = path.read_bytes()
    try:
        return blob.decode().split("\n")
    except UnicodeDecodeError as exc:
        _fail(path, blob[:exc.start].count(b"\n") + 1,
              f"byte {blob[exc.start]:#04x} at offset {exc.start} is not text: not a {kind} model file")


def _read_header(path, lines):
    """({keyword: value}, {keyword: line number}, the line number of `SV`)."""
    header, where = {}, {}
    for lineno, line in enumerate(lines, 1):
        key, _, rest = line.strip().partition(" ")
        if key == "SV":
            return header, where, lineno
        if not key:
            continue
        parse = _HEADER.get(key)
        if parse is None:
            _fail(path, lineno, f"unknown keyword {key[:40]!r}: not a LIBSVM model file header")
        if key in header:
            _fail(path, lineno, f"{key} repeated (first on line {where[key]})")
        try:
            header[key] = parse(rest.split())
        except (IndexError, ValueError) as exc:
            _fail(path, lineno, f"bad value for {key}: {rest.strip()[:60]!r} ({exc})")
        where[key] = lineno
    _fail(path, len(lines), "no 'SV' line: the file ends before the support vectors")


def _list_lengths(svm_type, k):
    """How many values each list keyword holds for nr_class k; None: svm_save_model never writes it."""
    pairs = k * (k - 1) // 2
    classifier = svm_type in _CLASSIFIERS
    return {"rho": pairs, "label": k if classifier else None, "nr_sv": k if classifier else None,
            "probA": None if svm_type == "one_class" else pairs, "probB": pairs if classifier else None,
            "prob_density_marks": _DENSITY_MARKS if svm_type == "one_class" else None}


def _check_header(path, header, where, sv_line):
    """The header's fields must agree with each other, as svm_load_model assumes."""
    svm_type, k, total = header["svm_type"], header["nr_class"], header["total_sv"]
    classifier = svm_type in _CLASSIFIERS
    if k < 2 or (k != 2 and not classifier):
        _fail(path, where["nr_class"], f"nr_class {k}: a {svm_type} model has "
              + ("at least 2 classes" if classifier else "nr_class 2"))
    if total < 0:
        _fail(path, where["total_sv"], f"total_sv {total} is negative")
    for key, length in _list_lengths(svm_type, k).items():
        values = header.get(key)
        if length is None and values is not None:
            _fail(path, where[key], f"a {svm_type} model has no {key} line")
        if values is None and key in ("rho", "label", "nr_sv") and length is not None:
            _fail(path, sv_line, f"the header has no {key} line, which a {svm_type} model needs")
        if values is not None and len(values) != length:
            _fail(path, where[key], f"{key} has {len(values)} values; nr_class {k} needs {length}")
    if classifier and ("probA" in header) != ("probB" in header):
        _fail(path, where.get("probA", where.get("probB")), "a classifier needs both probA and probB, or neither")
    if not classifier:
        return
    labels, counts = header["label"], header["nr_sv"]
    if len(set(labels)) != len(labels):
        _fail(path, where["label"], f"repeated class label in {labels}")
    if min(counts) < 0:
        _fail(path, where["nr_sv"], f"nr_sv {counts} has a negative count")
    if sum(counts) != total:
        _fail(path, where["nr_sv"], f"nr_sv adds up to {sum(counts)}, not total_sv = {total}")


def _read_svs(path, lines, first, n_coef, total, precomputed):
    """(coefficients, rows, columns, values) of the `total` lines after `SV`, each checked."""
    body = lines[first:]
    while body and not body[-1].strip():
        body.pop()
    if len(body) != total:
        _fail(path, first + len(body), f"expected {total} support vectors (total_sv), found {len(body)} lines")
    coef = np.empty((total, n_coef))
    rows, cols, vals = [], [], []
    for r, line in enumerate(body):
        lineno = first + r + 1
        tokens = line.split()
        if len(tokens) < n_coef or any(":" in t for t in tokens[:n_coef]):
            _fail(path, lineno, f"a support vector line starts with its {n_coef} coefficient(s) (nr_class - 1)")
        for c, text in enumerate(tokens[:n_coef]):
            coef[r, c] = _finite_number(path, lineno, "coefficient", text)
        features = tokens[n_coef:]
        if precomputed and len(features) != 1:
            _fail(path, lineno, "a precomputed kernel's support vector is one 0:ID token")
        prev = -1 if precomputed else 0
        for token in features:
            index, problem = parse_feature(token.encode(), prev, 0 if precomputed else 1, None)
            if problem:
                _fail(path, lineno, problem)
            value = _finite_number(path, lineno, f"value of feature {index}", token.partition(":")[2])
            if precomputed and (index != 0 or value != int(value) or not 1 <= value <= _INDEX_MAX):
                _fail(path, lineno, f"{token[:40]!r}: a precomputed kernel's support vector is 0:ID, "
                      f"ID a whole number from 1 to {_INDEX_MAX}")
            rows.append(r)
            cols.append(index)
            vals.append(value)
            prev = index
    return coef, np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), np.asarray(vals)


def _finite_number(path, lineno, what, text):
    try:
        return _finite(text)
    except ValueError as exc:
        _fail(path, lineno, f"{what} {text[:40]!r}: {exc}")


def load_libsvm_model(path, n_features=None):
    """Read a LIBSVM model file into the matching svmkit estimator, ready to predict.

    `n_features` widens the support vectors to that many features (LIBSVM's RBF kernel counts
    every feature of the input, also those no support vector has). For a precomputed kernel it
    is the number of kernel columns, one per training row: the file names only the rows that are
    support vectors (`0:ID`, 1-based), so without it the model expects as many columns as the
    highest ID. A header without a line its kernel reads (degree, gamma, coef0) is refused:
    LIBSVM's svm_load_model has no default for it.
    """
    path = Path(path)
    lines = text_lines(path, "LIBSVM")
    header, where, sv_line = _read_header(path, lines)
    for key in ("svm_type", "kernel_type", "nr_class", "total_sv"):
        if key not in header:
            _fail(path, sv_line, f"the header has no {key} line")
    svm_type, kernel = header["svm_type"], header["kernel_type"]
    if svm_type not in SVM_TYPES or kernel not in KERNEL_TYPES:
        _fail(path, 1, f"unknown svm_type {svm_type!r} or kernel_type {kernel!r}")
    classifier = svm_type in _CLASSIFIERS
    _check_header(path, header, where, sv_line)
    for key in _KERNEL_LINES[kernel]:
        if key not in header:
            _fail(path, sv_line, f"the header has no {key} line, which a {kernel} kernel needs (svm_load_model "
                  f"would leave {key} undefined)")
    nr_class, total = header["nr_class"], header["total_sv"]
    precomputed = kernel == "precomputed"
    coef, rows, cols, vals = _read_svs(path, lines, sv_line, nr_class - 1, total, precomputed)
    params = {"kernel": KERNEL_TYPES[kernel], **{key: header[key] for key in ("degree", "gamma", "coef0")
                                                 if key in header}}
    params["probability"] = any(key in header for key in _FLOAT_LISTS[1:])
    est = ESTIMATORS[SVM_TYPES[svm_type]](**params)
    if precomputed:
        support = vals.astype(np.int64) - 1
        width = max(int(support.max()) + 1 if support.size else 0, n_features or 0)
        sv = np.empty((0, 0))
    else:
        width = max(int(cols.max()) if cols.size else 0, n_features or 0)
        sv = sp.csr_matrix((vals, (rows, cols - 1)), shape=(total, width))
        support = np.arange(total)
    if width == 0:
        _fail(path, where["total_sv"], f"total_sv {total}: no support vector names a feature, so the model's "
              "width is unknown; pass n_features")
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
        state["offset_"] = np.asarray(header["rho"][:1])
    for key in _FLOAT_LISTS[1:]:
        if key in header:
            state[f"{key}_"] = np.asarray(header[key])
    try:
        return set_state(est, {k: v if sp.issparse(v) else np.asarray(v) for k, v in state.items()})
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"{path}: the model's parameters or arrays are inconsistent ({exc})") from None
