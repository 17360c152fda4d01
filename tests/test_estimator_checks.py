"""scikit-learn's estimator checks for every estimator a model file holds (svmkit.registry):
each with its defaults, and the instances of INSTANCES whose parameters reach another solver or
mode."""

import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmkit import registry

#: The instances checked of a model, as parameters; a model not named here is checked with its
#: defaults. KernelLogisticRegression's γ is fixed: 'scale' follows the data's variance, which
#: repeating rows changes.
INSTANCES = {
    "LinearSVC": ({"random_state": 0}, {"penalty": "l1", "dual": False, "random_state": 0},
                  {"multi_class": "crammer_singer", "random_state": 0}),
    "LinearSVR": ({"random_state": 0}, {"loss": "squared_epsilon_insensitive", "dual": False}),
    "KernelLogisticRegression": ({"gamma": 0.5},),
    "LSSVR": ({}, {"gamma": 0.5}),
    "LSSVC": ({}, {"multi_class": "ovo"}, {"gamma": 0.5}, {"gamma": 0.5, "multi_class": "ovo"}),
    "HardBandSVR": ({}, {"method": "reduction"}),
}

#: The estimators checked: every one with a model-file tag.
CHECKED = tuple(name for name, entry in registry.ESTIMATORS.items() if entry.tag is not None)

_SWE = ("check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")
_SMO_REASON = ("a weight of 2 and a repeated row give the same optimum, but two fits stopped at tol=1e-3 differ "
               "by ~1e-4 in decision values, above the check's 1e-9")
_SCALE_REASON = ("gamma='scale' follows the data's variance, which repeating rows changes (as scikit-learn's "
                 "SVR); the instances with a fixed γ pass the check")
# At scikit-learn's default tolerance a weighted fit stops elsewhere than the fit on repeated
# rows, though the optimum is the same (test_linear's test_integer_sample_weights_equal_repeated_rows
# solves both tightly): the coordinates are visited in random order, a repeated row twice per
# pass; and the primal classifier's tolerance scales with the smaller class's row count
# (LIBLINEAR's rule), which repeating rows changes. The primal regression (-s 11) has neither.
_ORDER = "random coordinate order: equal at the optimum, not at tol=1e-4 (see the weights test)"
_COUNT = "the primal tolerance scales with row counts: equal at the optimum, not at tol=1e-4"


def _smo_failures(est):
    failed = dict.fromkeys(_SWE, _SMO_REASON)
    if type(est).__name__ == "NuSVC":
        failed["check_class_weight_classifiers"] = (
            "class_weight is ignored (with a warning), as by scikit-learn's NuSVC, which expects this check "
            "to fail too, and LIBSVM's svm-train -s 1")
    return failed


#: check_fit_score_takes_y calls partial_fit on the model its fit made, which kept no rows (and
#: LinearSVC's l1 and Crammer–Singer solvers refuse updates at all).
_KEPT_REASON = ("partial_fit after a fit with keep_data=False is refused, naming keep_data: the model kept "
                "none of the rows an exact update needs")


def _dense_failures(est):
    failed = {}
    if est.get_params().get("gamma") == "scale":
        failed.update(dict.fromkeys(_SWE, _SCALE_REASON))
    return failed


def _linear_failures(est):
    params = est.get_params()
    if params.get("loss") == "squared_epsilon_insensitive" and params["dual"] is False:
        return {}
    primal_ovr = type(est).__name__ == "LinearSVC" and params["penalty"] == "l2" and params["multi_class"] == "ovr"
    return dict.fromkeys(_SWE, _COUNT if primal_ovr else _ORDER)


#: The checks each family is expected to fail, by instance.
_FAILURES = {"smo": _smo_failures, "dense": _dense_failures, "linear": _linear_failures}


def _expected_failed_checks(est):
    rule = _FAILURES.get(registry.ESTIMATORS[type(est).__name__].family)
    failed = rule(est) if rule else {}
    if hasattr(est, "partial_fit"):
        failed["check_fit_score_takes_y"] = _KEPT_REASON
    return failed


@parametrize_with_checks([registry.load(registry.ESTIMATORS[name])(**params) for name in CHECKED
                          for params in INSTANCES.get(name, ({},))],
                         expected_failed_checks=_expected_failed_checks)
def test_scikit_learn_estimator_contract(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
