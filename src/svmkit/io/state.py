"""A fitted kernel model as named arrays and back: everything prediction and the fitted
attributes need, and nothing that would need code to rebuild (no pickles)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmkit.io.data import pad_columns
from svmkit.models import (LSSVC, LSSVR, SVC, SVR, KernelLogisticRegression, KernelRidge, NuSVC, NuSVR,
                           OneClassSVM)
from svmkit.models.expansion import KernelExpansion

ESTIMATORS = {cls.__name__: cls for cls in (SVC, NuSVC, SVR, NuSVR, OneClassSVM, KernelRidge, LSSVR, LSSVC,
                                               KernelLogisticRegression)}

#: Fitted attributes kept, when the estimator has them.
FITTED = ("classes_", "class_weight_", "support_", "support_vectors_", "n_support_", "_dual_coef_",
          "_intercept_", "gamma_", "n_features_in_", "shape_fit_", "fit_status_", "objective_", "n_iter_",
          "free_support_", "bounded_support_", "loo_bound_", "inside_tube_", "on_tube_", "outside_tube_",
          "offset_", "epsilon_", "probA_", "probB_", "prob_density_marks_", "_multi_output", "loo_residuals_",
          "loo_score_", "loo_decision_")

_CSR_PARTS = ("data", "indices", "indptr", "shape")


def get_state(est: KernelExpansion) -> dict[str, np.ndarray]:
    """The fitted attributes as arrays; a CSR matrix becomes its four parts (`name.data`, …)."""
    state = {}
    for name in FITTED:
        if not hasattr(est, name):
            continue
        value = getattr(est, name)
        if sp.issparse(value):
            value = sp.csr_matrix(value)
            for part in _CSR_PARTS:
                state[f"{name}.{part}"] = np.asarray(getattr(value, part))
        else:
            state[name] = np.asarray(value)
    return state


#: Names fitted attributes had in earlier files.
_RENAMED = {"_gamma": "gamma_"}


def set_state(est: KernelExpansion, state: dict[str, np.ndarray]) -> KernelExpansion:
    """Give an unfitted estimator the fitted attributes in `state` and prepare it to predict."""
    state = {_RENAMED.get(name, name): value for name, value in state.items()}
    for name in FITTED:
        if f"{name}.data" in state:
            data, indices, indptr, shape = (state[f"{name}.{part}"] for part in _CSR_PARTS)
            setattr(est, name, sp.csr_matrix((data, indices, indptr), shape=tuple(int(v) for v in shape)))
        elif name in state:
            value = state[name]
            setattr(est, name, value.item() if value.ndim == 0 else value)
    if "shape_fit_" in state:
        est.shape_fit_ = tuple(int(v) for v in state["shape_fit_"])
    est._prepare_prediction()
    return est


def widen_features(est: KernelExpansion, n_features: int) -> KernelExpansion:
    """Give the support vectors zero features up to n_features (a LIBSVM model file names only
    the features its support vectors use) and prepare the model to predict at that width."""
    est.support_vectors_ = pad_columns(est.support_vectors_, n_features)
    est.n_features_in_ = n_features
    est.shape_fit_ = (est.shape_fit_[0], n_features)
    est._prepare_prediction()
    return est


def index_precomputed_support(est: KernelExpansion, ids: np.ndarray, n_columns: int) -> KernelExpansion:
    """For a model fitted on a precomputed kernel whose training rows carry LIBSVM's `0:ID`:
    make support_ the kernel columns of the support vectors (ID − 1), and expect test kernels
    with n_columns columns indexed the same way, as svm-predict does."""
    est.support_ = (np.asarray(ids)[est.support_].astype(np.int64) - 1).astype(np.int32)
    est.n_features_in_ = n_columns
    est.shape_fit_ = (n_columns, n_columns)
    est._prepare_prediction()
    return est
