"""A fitted model or scaler as named arrays and back: everything prediction and the fitted
attributes need, and nothing that would need code to rebuild (no pickles)."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from svmkit import registry
from svmkit.io.data import pad_columns
from svmkit.models.band import HardBandSVR
from svmkit.models.expansion import KernelExpansion
from svmkit.preprocessing.scaler import LibsvmScaler, _check_limits

#: The models and the scalers a model file holds (svmkit.registry): the class of each tag.
ESTIMATORS = {tag: registry.load(e) for tag, e in registry.saved().items() if e.kind != "transformer"}
SCALERS = {tag: registry.load(e) for tag, e in registry.saved().items() if e.kind == "transformer"}
#: Which of its fitted arrays a fitted scaler of given parameters has (the others a fit leaves
#: None and the file leaves out).
_SCALER_ARRAYS = {
    "StandardScaler": lambda est: ("mean_",) * est.with_mean + ("var_", "scale_") * est.with_std,
    "MinMaxScaler": lambda est: ("min_", "scale_", "data_min_", "data_max_", "data_range_"),
    "MaxAbsScaler": lambda est: ("scale_", "max_abs_"),
    "LibsvmScaler": lambda est: ("feature_min_", "feature_max_") + ("y_min_", "y_max_") * (est.y_lower is not None),
}
#: Scaler arrays that must be > 0, ≥ 0.
_POSITIVE, _NON_NEGATIVE = ("scale_",), ("var_", "max_abs_", "data_range_", "n_samples_seen_")

_CSR_PARTS = ("data", "indices", "indptr", "shape")


def get_state(est) -> dict[str, np.ndarray]:
    """The fitted attributes (`fitted_state`, a scaler's arrays) and `feature_names_in_` as
    arrays; a CSR matrix becomes its four parts (`name.data`, …)."""
    state = {}
    kind = type(est).__name__
    fitted = ({key: getattr(est, key) for key in registry.saved()[kind].fitted
               if getattr(est, key, None) is not None} if kind in SCALERS else est.fitted_state())
    if hasattr(est, "feature_names_in_"):
        fitted["feature_names_in_"] = est.feature_names_in_
    for name, value in fitted.items():
        if sp.issparse(value):
            value = sp.csr_matrix(value)
            for part in _CSR_PARTS:
                state[f"{name}.{part}"] = np.asarray(getattr(value, part))
        else:
            state[name] = np.asarray(value)
    return state


#: What every model needs to predict.
_REQUIRED = ("support_", "support_vectors_", "_dual_coef_", "_intercept_", "n_features_in_", "shape_fit_")
#: Names fitted attributes had in earlier files.
_RENAMED = {"_gamma": "gamma_"}


def set_state(est, state: dict[str, np.ndarray]):
    """Give an unfitted estimator the fitted attributes in `state` and prepare it to predict,
    once its parameters pass the checks of its fit and its arrays agree with each other and
    with them (a ValueError or TypeError names the first fault; a model of wᵀx + b checks its
    own few arrays)."""
    _check_params(est)
    state = _join_sparse(dict(state))
    names = state.pop("feature_names_in_", None)
    if "classes_" in state:
        _check_classes(state["classes_"])
    if type(est).__name__ in SCALERS:
        est = _set_scaler_state(est, state)
    elif not isinstance(est, KernelExpansion):
        est = est.set_fitted_state(state)
    else:
        est = _set_expansion_state(est, state)
    if names is not None:
        if names.ndim != 1 or names.size != est.n_features_in_ or not all(isinstance(v, str) for v in names):
            raise ValueError(f"feature_names_in_ is not {est.n_features_in_} names")
        est.feature_names_in_ = names
    return est


def _join_sparse(state):
    """`state` with each CSR matrix's four parts (`name.data`, …, as `get_state` writes them)
    joined back into the matrix."""
    for name in sorted({key.rsplit(".", 1)[0] for key in state if "." in key}):
        parts = [state.pop(f"{name}.{part}", None) for part in _CSR_PARTS]
        if any(a is None for a in parts):
            raise ValueError(f"{name} lacks some of its sparse parts {list(_CSR_PARTS)}")
        data, indices, indptr, shape = parts
        if any(a.dtype.kind not in "iu" for a in (indices, indptr, shape)) or shape.shape != (2,):
            raise ValueError(f"{name}'s sparse indices, indptr and shape must be integers (shape two of them)")
        state[name] = sp.csr_matrix((data, indices, indptr), shape=tuple(int(v) for v in shape))
    return state


def _check_params(est) -> None:
    """The parameter checks the estimator's fit runs (a HardBandSVR's do not matter to prediction)."""
    if hasattr(est, "check_parameters"):
        est.check_parameters()
    elif isinstance(est, LibsvmScaler):
        _check_limits(est.lower, est.upper, ("lower", "upper"))
        est._scales_y()
    elif not isinstance(est, HardBandSVR):
        est._validate_params()


def _check_classes(classes) -> None:
    """Class labels as a fit leaves them: a vector of two or more distinct labels, none NaN."""
    if classes.ndim != 1 or classes.size < 2 or classes.dtype.kind not in "biufUOMm":
        raise ValueError(f"classes_ of shape {classes.shape} and dtype {classes.dtype} is not a vector of two or "
                         "more labels")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        raise ValueError(f"classes_ {classes.tolist()} holds a label that is not a finite number")
    if len(set(classes.tolist())) != classes.size:
        raise ValueError(f"classes_ {classes.tolist()} repeats a label")


def _set_scaler_state(est, state):
    """A scaler's arrays, each finite and one per feature (n_samples_seen_ also one count)."""
    kind = type(est).__name__
    fitted = registry.saved()[kind].fitted
    unknown = sorted(set(state) - set(fitted))
    if unknown:
        raise ValueError(f"unknown arrays {unknown}")
    required = _SCALER_ARRAYS[kind](est)
    missing = [name for name in (*required, "n_features_in_") if name not in state]
    if missing:
        raise ValueError(f"missing arrays {missing}")
    n_features = state["n_features_in_"]
    if n_features.ndim != 0 or n_features.dtype.kind not in "iu" or n_features < 1:
        raise ValueError(f"n_features_in_ {n_features.tolist()!r} is not a positive integer")
    for name, value in state.items():
        if value.dtype.kind not in "iuf" or not np.all(np.isfinite(value)):
            raise ValueError(f"{name} holds a value that is not a finite number")
        shapes = {"n_features_in_": ((),), "y_min_": ((),), "y_max_": ((),),
                  "n_samples_seen_": ((), (int(n_features),))}.get(name, ((int(n_features),),))
        if value.shape not in shapes:
            raise ValueError(f"{name} of shape {value.shape} for n_features_in_={int(n_features)}")
        if (name in _POSITIVE and not np.all(value > 0)) or (name in _NON_NEGATIVE and not np.all(value >= 0)):
            raise ValueError(f"{name} holds a value out of range (must be {'> 0' if name in _POSITIVE else '>= 0'})")
    if "feature_min_" in state and not np.all(state["feature_min_"] <= state["feature_max_"]):
        raise ValueError("feature_min_ exceeds feature_max_")
    for name in fitted:
        value = state.get(name)
        setattr(est, name, None if value is None else value[()] if value.ndim == 0 else value)
    est.n_features_in_ = int(n_features)
    return est


def _set_expansion_state(est, state):
    """A kernel expansion's arrays (a CSR matrix from its parts), checked against each other."""
    state = {_RENAMED.get(name, name): value for name, value in state.items()}
    names = registry.fitted_of(type(est))
    unknown = sorted(set(state) - set(names))
    if unknown:
        raise ValueError(f"unknown arrays {unknown}")
    fitted = {}
    for name in names:
        if name in state:
            value = state[name]
            fitted[name] = value if sp.issparse(value) or value.ndim else value.item()
    missing = [name for name in _REQUIRED if name not in fitted]
    if missing:
        raise ValueError(f"missing arrays {missing}")
    _check_arrays(fitted)
    _check_gamma(est, fitted.get("gamma_"))
    return est.set_fitted_state(fitted)


def _check_gamma(est, gamma):
    """The resolved γ: the parameter itself when it is a number, else ('scale', 'auto') > 0."""
    param = est.get_params()["gamma"]
    param = "auto" if param is None else param  # KernelRidge's gamma=None is 1 / n_features
    if gamma is None:
        return
    if isinstance(param, numbers.Real) and not isinstance(param, bool):
        if gamma != float(param):
            raise ValueError(f"gamma_={gamma!r} differs from the parameter gamma={param!r}")
    elif not gamma > 0:
        raise ValueError(f"gamma_={gamma!r} is not positive, which gamma={param!r} always resolves to")


def _check_arrays(fitted):
    """Raise ValueError naming the first array that disagrees with the others or is not finite:
    prediction would otherwise read past an array or return NaN."""
    sv = fitted.get("support_vectors_")
    if sp.issparse(sv):
        sv.check_format(full_check=True)  # indices within the shape, indptr ascending
    support = np.asarray(fitted.get("support_", ()))
    coef = np.asarray(fitted.get("_dual_coef_", np.empty((0, support.size))))
    problems = {
        "support_ is not a vector of row numbers": support.ndim != 1 or support.dtype.kind not in "iu"
                                                    or (support.size and support.min() < 0),
        f"_dual_coef_ of shape {coef.shape} does not have one column per support vector ({support.size})":
            coef.ndim != 2 or coef.shape[1] != support.size,
        f"n_support_ {np.ravel(fitted.get('n_support_', ())).tolist()} does not add up to the {support.size} "
        "support vectors": "n_support_" in fitted and (np.ndim(fitted["n_support_"]) != 1
                                                        or np.sum(fitted["n_support_"]) != support.size
                                                        or np.min(fitted["n_support_"], initial=0) < 0),
        "class_weight_ holds a negative weight": np.min(fitted.get("class_weight_", ()), initial=0) < 0,
    }
    # a precomputed kernel keeps no support vectors: support_ indexes the kernel's columns
    if sv is not None and sv.shape != (0, 0):
        problems[f"support_vectors_ has {sv.shape[0]} rows for {support.size} support vectors"] = (
            sv.shape[0] != support.size)
    for name in ("support_vectors_", "_dual_coef_", "_intercept_", "gamma_", "probA_", "probB_",
                 "prob_density_marks_", "offset_", "class_weight_", "objective_", "loo_bound_", "epsilon_"):
        value = fitted.get(name)
        values = value.data if sp.issparse(value) else np.asarray(value if value is not None else ())
        problems[f"{name} holds a value that is not a finite number"] = (
            values.dtype.kind not in "iuf" or not np.all(np.isfinite(values)))
    problems.update(_shape_problems(fitted, sv, support, coef))
    found = [problem for problem, failed in problems.items() if failed]
    if found:
        raise ValueError(found[0])


#: Fitted arrays of training-row numbers.
_ROW_INDICES = ("support_", "free_support_", "bounded_support_", "inside_tube_", "on_tube_", "outside_tube_")


def _shape_problems(fitted, sv, support, coef):
    """The counts, widths and row numbers the arrays must agree on, as {problem: failed}."""
    def whole(value, size=None):
        a = np.asarray(value)
        return a.dtype.kind in "iu" and (size is None or a.shape == (size,))

    n_features, shape_fit = fitted.get("n_features_in_"), np.asarray(fitted.get("shape_fit_", ()))
    problems = {
        f"n_features_in_ {n_features!r} is not a positive integer": not (whole(n_features) and np.ndim(n_features) == 0
                                                                         and n_features >= 1),
        f"shape_fit_ {shape_fit.tolist()} is not two counts": not (whole(shape_fit, 2) and shape_fit.min() >= 0),
    }
    if any(problems.values()):
        return problems
    if sv is not None and sv.shape != (0, 0):
        problems[f"support_vectors_ has {sv.shape[1]} columns for n_features_in_={n_features}"] = (
            sv.shape[1] != n_features)
    for name in _ROW_INDICES:
        rows = np.asarray(fitted.get(name, np.empty(0, np.int64)))
        problems[f"{name} is not a vector of row numbers below shape_fit_[0]={shape_fit[0]}"] = (
            rows.ndim != 1 or rows.dtype.kind not in "iu" or (rows.size and not 0 <= rows.min() <= rows.max()
                                                                < shape_fit[0]))
    intercept = np.asarray(fitted.get("_intercept_", ()))
    classes, n_support = fitted.get("classes_"), fitted.get("n_support_")
    if classes is not None and n_support is not None:  # one-vs-one: a problem per pair of classes
        k = np.size(classes)
        pairs = k * (k - 1) // 2
        problems[f"classes_ has {k} labels but n_support_ {np.size(n_support)} counts"] = np.size(n_support) != k
        problems[f"_intercept_ of shape {intercept.shape} for {k} classes ({pairs} pairs)"] = intercept.shape != (pairs,)
        problems[f"_dual_coef_ has {coef.shape[0]} rows for {k} classes (one fewer needed)"] = coef.shape[0] != k - 1
        for name in ("probA_", "probB_"):
            if name in fitted:
                problems[f"{name} of shape {np.shape(fitted[name])} for {pairs} pairs"] = (
                    np.shape(fitted[name]) not in ((0,), (pairs,)))
    else:
        problems[f"_intercept_ of shape {intercept.shape} for {coef.shape[0]} rows of _dual_coef_"] = (
            intercept.shape != coef.shape[:1])
    if classes is not None and "class_weight_" in fitted:
        problems[f"class_weight_ has {np.size(fitted['class_weight_'])} weights for {np.size(classes)} classes"] = (
            np.size(fitted["class_weight_"]) != np.size(classes))
    return problems


def widen_features(est: KernelExpansion, n_features: int) -> KernelExpansion:
    """Give the support vectors zero features up to n_features (a LIBSVM model file names only
    the features its support vectors use) and prepare the model to predict at that width."""
    state = est.fitted_state()
    return est.set_fitted_state({**state, "support_vectors_": pad_columns(state["support_vectors_"], n_features),
                                 "n_features_in_": n_features, "shape_fit_": (state["shape_fit_"][0], n_features)})


def index_precomputed_support(est: KernelExpansion, ids: np.ndarray, n_columns: int) -> KernelExpansion:
    """For a model fitted on a precomputed kernel whose training rows carry LIBSVM's `0:ID`:
    make support_ the kernel columns of the support vectors (ID − 1), and expect test kernels
    with n_columns columns indexed the same way, as svm-predict does."""
    support = (np.asarray(ids)[est.support_].astype(np.int64) - 1).astype(np.int32)
    return est.set_fitted_state({**est.fitted_state(), "support_": support, "n_features_in_": n_columns,
                                 "shape_fit_": (n_columns, n_columns)})
