"""Every estimator svmkit offers, declared once: its public name, the class (a "module:Class"
string, imported on first use, so that `import svmkit` loads neither scikit-learn nor the core),
what kind of estimator it is, the fitted attributes a model file holds, and the name a model
file's header gives it.

Adding a model means adding one entry to `ESTIMATORS`: `svmkit.X`, `svmkit.<package>.X`, the
model files, scikit-learn's estimator checks and the fuzzing suite all read this table
(tests/test_registry.py holds them to it)."""

from __future__ import annotations

import importlib
import sys
from typing import NamedTuple


class Entry(NamedTuple):
    """One estimator. home: "module:Class" where the class is defined; kind: 'classifier',
    'regressor', 'outlier', 'transformer' or 'search'; fitted: the fitted attributes a model file
    keeps when the estimator has them (everything prediction and the fitted attributes need,
    nothing that would need code to rebuild); tag: the estimator's name in a model file's
    header (None: a file keeps a fitted search's best_estimator_, not the search); family:
    'smo', 'dense', 'linear', 'band', or '' for what is not a model."""

    home: str
    kind: str
    fitted: tuple[str, ...] = ()
    tag: str | None = None
    family: str = ""


#: The training rows a model keeps for `partial_fit` and `forget` (`models.retained`).
_RETAINED = ("retained_X_", "retained_y_", "retained_weight_")
#: Fitted attributes of every kernel expansion f(x) = Σ_s W[s] K(x, c_s) + b.
_EXPANSION = ("support_", "support_vectors_", "_dual_coef_", "_intercept_", "gamma_", "n_features_in_",
              "shape_fit_") + _RETAINED
#: … of the models fitted by SMO (LIBSVM's five formulations).
_SMO = _EXPANSION + ("n_support_", "fit_status_", "objective_", "n_iter_", "free_support_", "bounded_support_",
                     "loo_bound_")
#: … of the models fitted by a factorisation or Nyström's Newton (its objective and passes).
_DENSE = _EXPANSION + ("objective_", "n_iter_")
#: … of the models whose prediction is wᵀx + b.
_PLAIN = ("coef_", "intercept_", "n_features_in_")
_LINEAR = _PLAIN + ("n_iter_", "objective_", "solver_") + _RETAINED + ("retained_dual_",)
#: A split conformal calibration's scores (`models.conformal`).
_CAL = ("conformity_scores_",)
#: … and the leave-one-out block of M⁻¹ that jackknife+ reads (`fit_conformalize`, 8 bytes × N²).
_JACKKNIFE = _CAL + ("_loo_inverse", "_loo_border")
_SVC = _SMO + ("classes_", "class_weight_", "probA_", "probB_") + _CAL
_SVR = _SMO + ("inside_tube_", "on_tube_", "outside_tube_", "probA_", "probB_", "cv_plus_folds_") + _CAL

ESTIMATORS = {
    "SVC": Entry("svmkit.models.smo.svc:SVC", "classifier", _SVC, "SVC", "smo"),
    "NuSVC": Entry("svmkit.models.smo.nusvc:NuSVC", "classifier", _SVC, "NuSVC", "smo"),
    "SVR": Entry("svmkit.models.smo.svr:SVR", "regressor", _SVR, "SVR", "smo"),
    "NuSVR": Entry("svmkit.models.smo.svr:NuSVR", "regressor", _SVR + ("epsilon_",), "NuSVR", "smo"),
    "KernelQuantileRegressor": Entry("svmkit.models.smo.quantile:KernelQuantileRegressor", "regressor", _SVR,
                                     "KernelQuantileRegressor", "smo"),
    "OneClassSVM": Entry("svmkit.models.smo.one_class:OneClassSVM", "outlier",
                         _SMO + ("offset_", "prob_density_marks_"), "OneClassSVM", "smo"),
    "KernelRidge": Entry("svmkit.models.dense.ridge:KernelRidge", "regressor",
                         _DENSE + ("_multi_output", "loo_residuals_", "loo_score_", "_fit_float32") + _JACKKNIFE, "KernelRidge",
                         "dense"),
    "LSSVR": Entry("svmkit.models.dense.lssvm:LSSVR", "regressor", _DENSE + ("loo_residuals_", "loo_score_") + _JACKKNIFE, "LSSVR",
                   "dense"),
    "LSSVC": Entry("svmkit.models.dense.lssvm:LSSVC", "classifier", _DENSE + ("classes_", "loo_score_", "loo_decision_"),
                   "LSSVC", "dense"),
    "KernelLogisticRegression": Entry("svmkit.models.dense.klr:KernelLogisticRegression", "classifier",
                                      _DENSE + ("classes_",) + _CAL, "KernelLogisticRegression", "dense"),
    "LinearSVC": Entry("svmkit.models.linear.svm:LinearSVC", "classifier", ("classes_",) + _LINEAR, "LinearSVC",
                       "linear"),
    "LinearSVR": Entry("svmkit.models.linear.svm:LinearSVR", "regressor", _LINEAR + _CAL, "LinearSVR", "linear"),
    "HardBandSVR": Entry("svmkit.models.band:HardBandSVR", "regressor",
                         _PLAIN + ("epsilon_inf_", "epsilon_", "epsilon_bar_", "eta_bar_", "n_iter_") + _CAL, "HardBandSVR",
                         "band"),
    "SVMSearchCV": Entry("svmkit.model_selection.search:SVMSearchCV", "search"),
    "KernelRidgeCV": Entry("svmkit.model_selection.loo:KernelRidgeCV", "search"),
    "LSSVMCV": Entry("svmkit.model_selection.loo:LSSVMCV", "search"),
    "LibsvmScaler": Entry("svmkit.preprocessing.scaler:LibsvmScaler", "transformer",
                          ("feature_min_", "feature_max_", "y_min_", "y_max_", "n_features_in_"), "LibsvmScaler"),
}

#: Other libraries' estimators a model file holds (a Pipeline's scaling step), by tag.
FOREIGN = {
    "StandardScaler": Entry("sklearn.preprocessing:StandardScaler", "transformer",
                            ("mean_", "var_", "scale_", "n_samples_seen_", "n_features_in_"), "StandardScaler"),
    "MinMaxScaler": Entry("sklearn.preprocessing:MinMaxScaler", "transformer",
                          ("min_", "scale_", "data_min_", "data_max_", "data_range_", "n_samples_seen_",
                           "n_features_in_"), "MinMaxScaler"),
    "MaxAbsScaler": Entry("sklearn.preprocessing:MaxAbsScaler", "transformer",
                          ("scale_", "max_abs_", "n_samples_seen_", "n_features_in_"), "MaxAbsScaler"),
}


def models(family: str | None = None) -> tuple[str, ...]:
    """The names of the models (estimators with a family), those of `family` if given."""
    return tuple(name for name, e in ESTIMATORS.items() if e.family and family in (None, e.family))


def of_kind(kind: str) -> tuple[str, ...]:
    """The names of the estimators of `kind`."""
    return tuple(name for name, e in ESTIMATORS.items() if e.kind == kind)


def module_of(name: str) -> str:
    """The module that defines estimator `name`."""
    return ESTIMATORS[name].home.partition(":")[0]


def load(entry: Entry) -> type:
    """The class of `entry` (imports its module)."""
    module, _, cls = entry.home.partition(":")
    return getattr(importlib.import_module(module), cls)


def saved() -> dict[str, Entry]:
    """The entries a model file holds, by tag."""
    return {e.tag: e for e in (*ESTIMATORS.values(), *FOREIGN.values()) if e.tag is not None}


def fitted_of(cls: type) -> tuple[str, ...]:
    """The fitted attributes a model file keeps for `cls`: those of the first class in its MRO
    that is registered (so a subclass keeps its base's)."""
    homes = {e.home: e for e in ESTIMATORS.values()}
    for base in cls.__mro__:
        entry = homes.get(f"{base.__module__}:{base.__qualname__}")
        if entry is not None:
            return entry.fitted
    raise TypeError(f"{cls.__name__} is not a registered estimator nor a subclass of one (svmkit.registry)")


def defined_in(package: str) -> tuple[str, ...]:
    """The names of the estimators whose class is defined in `package` or a module of it."""
    return tuple(name for name in ESTIMATORS if f"{module_of(name)}.".startswith(f"{package}."))


def exports(package: str):
    """(__all__, __getattr__) of `package`: the estimators defined in it, each imported from
    its module on first use (PEP 562)."""
    names = defined_in(package)

    def __getattr__(name):
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = load(ESTIMATORS[name])
        setattr(sys.modules[package], name, value)  # later look-ups find it without coming here
        return value

    return list(names), __getattr__
