"""Conformal prediction intervals and sets (Vovk, Gammerman & Shafer 2005), shared by the models.

- Split conformal (Papadopoulos et al. 2002; Lei et al. 2018): `conformalize(X_cal, y_cal)` keeps
  the scores of a held-out calibration part, s_i = |y_i − f(x_i)| for a regressor; the interval is
  f(x) ± q̂, q̂ the ⌈c(n+1)⌉-th smallest of the n scores (c the coverage). Its marginal coverage is
  in [c, c + 1/(n+1)] for exchangeable data and continuous scores.
- Jackknife+ and CV+ (Barber, Candès, Ramdas & Tibshirani, "Predictive inference with the
  jackknife+", Ann. Statist. 49(1), 2021): from the models f₋ᵢ fitted without row i (or its
  fold) and R_i = |y_i − f₋ᵢ(x_i)|, the interval is [the ⌈c(n+1)⌉-th largest of f₋ᵢ(x) − R_i,
  the ⌈c(n+1)⌉-th smallest of f₋ᵢ(x) + R_i]; coverage at least 1 − 2(1 − c).
- Prediction sets (LAC: Sadinle, Lei & Wasserman, "Least ambiguous set-valued classifiers with
  bounded error levels", JASA 2019): scores s_i = 1 − p̂_{y_i}(x_i) on a calibration part; the
  set holds every class with 1 − p̂_k(x) ≤ q̂; coverage in [c, c + 1/(n+1)] likewise.

The order statistic ⌈c(n+1)⌉ is MAPIE's (`_compute_regression_quantile`: numpy's "lower"
quantile at ⌈c(n+1)⌉/n), so that the intervals equal its own."""

from __future__ import annotations

import copy

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from svmkit._validation import check_real
from svmkit.kernels.kinds import kernel_kind
from svmkit.models.retained import RETAINED

#: Every interval method, by name.
METHODS = ("split", "jackknife+", "cv+", "laplace")
#: What a calibration leaves on a model: a new fit drops it (`drop_calibration`).
CALIBRATION = ("conformity_scores_", "_loo_inverse", "_loo_border", "_cv_models_", "_cv_fold_", "_cv_residuals_",
               "cv_plus_folds_")
#: Most float64 values of the leave-out predictions held at once (32 MB).
BLOCK_ELEMENTS = 1 << 22
#: Slack in ⌈c(n+1)⌉ for c·(n+1) an integer up to rounding.
RANK_SLACK = 1e-9


def drop_calibration(model) -> None:
    """Forget a calibration made for an earlier fit (called by every fit, update included)."""
    for name in CALIBRATION:
        vars(model).pop(name, None)


def check_coverage(coverage) -> float:
    """`coverage` as a float in (0, 1), else a ValueError naming it."""
    c = check_real(coverage, "coverage", low=0)
    if not c < 1:
        raise ValueError(f"coverage must be in (0, 1), got coverage={coverage!r}")
    return c


def rank(coverage: float, n: int) -> int:
    """k = ⌈c(n+1)⌉, the order statistic of n scores that conformal prediction takes; a ValueError
    when k > n (the interval would be infinite) naming the least n that serves."""
    k = int(np.ceil(coverage * (n + 1) - RANK_SLACK))
    if k > n:
        need = int(np.ceil(coverage / (1 - coverage) - RANK_SLACK))
        raise ValueError(f"{n} calibration scores are too few for coverage={coverage!r}: the conformal quantile "
                         f"is the ⌈coverage·(n+1)⌉ = {k}-th smallest of n, so it needs n ≥ {need}; give more "
                         "calibration rows or ask a lower coverage")
    return max(k, 1)


def kth_smallest(values: np.ndarray, k: int, axis: int) -> np.ndarray:
    """The k-th smallest (1-based) of `values` along `axis`."""
    return np.take(np.partition(values, k - 1, axis=axis), k - 1, axis=axis)


def plus_bounds(leave_out: np.ndarray, residuals: np.ndarray, coverage: float):
    """Jackknife+/CV+ bounds from the leave-out predictions f₋ᵢ(x) (m × n × k) and R_i (n × k):
    the k-th largest of f₋ᵢ(x) − R_i and the k-th smallest of f₋ᵢ(x) + R_i over i, k = ⌈c(n+1)⌉."""
    k = rank(coverage, residuals.shape[0])
    return -kth_smallest(residuals - leave_out, k, axis=1), kth_smallest(leave_out + residuals, k, axis=1)


def _as_columns(a: np.ndarray) -> np.ndarray:
    return a.reshape(a.shape[0], -1)


class ConformalRegressor:
    """`predict_interval` and `conformalize` of a regressor. A model whose leave-out fits give
    jackknife+ or CV+ names it in `_plus_method` and gives `_leave_out_block(X)` and
    `_leave_out_residuals()`; one with a model of its own names it in `_fallback_interval`."""

    _plus_method: str | None = None
    _fallback_interval: str | None = None

    def conformalize(self, X, y):
        """Calibrate split conformal intervals on held-out rows (X, y), which the fit did not
        see: keeps their scores |y − f(x)| (`conformity_scores_`, one column per output of a
        multi-output model). Returns self."""
        check_is_fitted(self)
        f = np.asarray(self.predict(X), dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        check_consistent_length(f, y)
        if y.size != f.size:
            raise ValueError(f"conformalize needs y of shape {f.shape} (a target per output of each row), got "
                             f"shape {y.shape}")
        y = y.reshape(f.shape)
        if not np.isfinite(y).all():
            raise ValueError("conformalize needs finite targets y")
        self.conformity_scores_ = np.abs(y - f)
        return self

    def predict_interval(self, X, coverage=0.9, method=None):
        """[lower, upper] per row of X holding its target with probability `coverage`.

        method : {'split', 'jackknife+', 'cv+', 'laplace'} or None
            'split': after `conformalize`; 'jackknife+' (KernelRidge, LSSVR) and 'cv+' (SVR,
            NuSVR, KernelQuantileRegressor): after `fit_conformalize`; 'laplace': LIBSVM's
            noise model of the SVRs fitted with probability=True (no coverage guarantee).
            None: 'split' after `conformalize`, else the jackknife+/CV+ of `fit_conformalize`,
            else the model's own ('laplace' for the SVRs, as before).

        Returns an array of shape (n_samples, 2) ((n_samples, 2, n_outputs) for a multi-output
        KernelRidge)."""
        check_is_fitted(self)
        coverage = check_coverage(coverage)
        method = self._interval_method(method)
        if method == "laplace":
            return self._laplace_interval(X, coverage)
        if method == "split":
            f = np.asarray(self.predict(X), dtype=np.float64)
            half = kth_smallest(self.conformity_scores_, rank(coverage, self.conformity_scores_.shape[0]), axis=0)
            return np.stack([f - half, f + half], axis=1)
        return self._plus_interval(X, coverage)

    def _interval_method(self, method):
        """The method asked (None: the calibration the model holds), once the model can give it."""
        offered = ("split",) + tuple(m for m in (self._plus_method, self._fallback_interval) if m)
        if method is None:
            method = "split" if hasattr(self, "conformity_scores_") else \
                self._plus_method if self._has_plus() or self._plus_lost() else self._fallback_interval or "split"
        if method not in METHODS:
            raise ValueError(f"unknown interval method={method!r}; one of {METHODS}")
        if method not in offered:
            raise ValueError(f"{type(self).__name__} cannot give method={method!r}: it offers {offered}")
        if method == "split" and not hasattr(self, "conformity_scores_"):
            raise NotFittedError("method='split' needs a calibration: call conformalize(X_cal, y_cal) on rows "
                                 "the fit did not see")
        if method == self._plus_method and self._plus_lost():
            raise NotFittedError(f"this {type(self).__name__} was calibrated for {method} by fit_conformalize, but "
                                 "model files keep no fold models: call fit_conformalize again, or conformalize(X_cal, "
                                 "y_cal) for split intervals")
        if method == self._plus_method and not self._has_plus():
            raise NotFittedError(f"method={method!r} needs the leave-out fits: fit with fit_conformalize(X, y)")
        return method

    def _has_plus(self) -> bool:
        return False

    def _plus_lost(self) -> bool:
        """Whether a calibration for the leave-out method was made but its fits are gone (a
        model loaded from a file)."""
        return False

    def _plus_interval(self, X, coverage):
        """Jackknife+/CV+ intervals, the leave-out predictions made by blocks of rows of X."""
        X = self._check_predict_X(X)
        residuals = _as_columns(np.abs(self._leave_out_residuals()))
        n, k = residuals.shape
        step = max(1, BLOCK_ELEMENTS // (n * k))
        out = np.empty((X.shape[0], 2, k))
        for lo in range(0, X.shape[0], step):
            out[lo:lo + step, 0], out[lo:lo + step, 1] = plus_bounds(self._leave_out_block(X[lo:lo + step]),
                                                                     residuals, coverage)
        return out if getattr(self, "_multi_output", False) else out[:, :, 0]


class JackknifePlus(ConformalRegressor):
    """Jackknife+ of the closed-form dense models from their exact leave-one-out fits, no refit:
    for M θ = t (kernel ridge's K + λS⁻², the LS-SVM's bordered system), the solution without
    row i is θ − M⁻¹e_i θ_i / (M⁻¹)_ii, so f₋ᵢ(x) = f(x) − ((M⁻¹)_{x,i}) r_i with r_i =
    θ_i/(M⁻¹)_ii the leave-one-out residual (Cawley & Talbot 2004) and (M⁻¹)_{x,i} =
    Σ_j K(x, x_j)E_ji + e_i, E the coefficient block of M⁻¹ and e its border row. `fit_conformalize`
    keeps E: 8 bytes × N² (and 16 bytes × N² while it is formed)."""

    _plus_method = "jackknife+"

    def fit_conformalize(self, X, y, sample_weight=None):
        """Fit on every row with the exact leave-one-out fits (`loo=True`, an exact solver) and
        keep what their predictions need (the N × N block of M⁻¹) for
        `predict_interval(method='jackknife+')`. Returns self."""
        # the fit reads `loo` to make its factorisation exact and to give r; the parameter the
        # user set is back afterwards
        loo = self.loo
        vars(self)["loo"] = True
        vars(self)["_conformal_fit"] = True
        try:
            return self.fit(X, y, sample_weight)
        finally:
            vars(self)["loo"] = loo
            vars(self).pop("_conformal_fit", None)

    def _keep_loo_inverse(self, blocks) -> None:
        """Keep (E, e) when `fit_conformalize` asked for them."""
        if vars(self).get("_conformal_fit"):
            self._loo_inverse, self._loo_border = blocks()

    def _has_plus(self) -> bool:
        return hasattr(self, "_loo_inverse")

    def _leave_out_residuals(self):
        return self.loo_residuals_

    def _leave_out_block(self, X):
        f = self._raw_of(X)
        weights = self._support_kernel_products(X, self._loo_inverse) + self._loo_border
        return f[:, None, :] - weights[:, :, None] * _as_columns(self.loo_residuals_)[None]


class CVPlus(ConformalRegressor):
    """CV+ of the SMO regressors: `fit_conformalize` fits the model on every row, then one model per
    fold without that fold's rows, each warm-started from the full fit's α by `forget`
    (Cauwenberghs & Poggio 2000). It keeps the fold models' support vectors and coefficients
    (each at most the model's rows) and each training row's |residual| under its fold's model."""

    _plus_method = "cv+"

    def fit_conformalize(self, X, y, sample_weight=None, cv=5):
        """Fit on every row and the `cv` fold models for `predict_interval(method='cv+')`; the
        folds are a random partition drawn with `random_state`. Returns self."""
        if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
            raise ValueError(f"cv must be an integer ≥ 2 (the number of folds), got cv={cv!r}")
        kernel_kind(self.kernel).check_updatable("CV+ (whose fold models forget rows; conformalize gives split "
                                                 "intervals) needs")
        self._fit_rows(X, y, sample_weight, keep=True)
        n = self.retained_X_.shape[0]
        if cv > n:
            raise ValueError(f"cv={cv} folds need at least {cv} training rows, got {n}")
        fold = np.random.default_rng(self.random_state).permutation(n) % cv
        models, residuals = [], np.empty(n)
        targets = np.asarray(self.retained_y_, dtype=np.float64)
        for f in range(cv):
            model = copy.copy(self)
            # the full fit's kernel rows stay its own; the fold's fit reads what it needs
            vars(model).pop("_kept_rows", None)
            model.forget(np.flatnonzero(fold == f))
            for name in (*RETAINED, "_kept_rows", "_problem_fits"):
                vars(model).pop(name, None)
            held = fold == f
            residuals[held] = targets[held] - model.predict(self.retained_X_[held])
            models.append(model)
        if not self.keep_data:
            for name in (*RETAINED, "_kept_rows"):
                vars(self).pop(name, None)
        self._cv_models_, self._cv_fold_, self._cv_residuals_ = models, fold, residuals
        self.cv_plus_folds_ = cv
        return self

    def _has_plus(self) -> bool:
        return hasattr(self, "_cv_models_")

    def _plus_lost(self) -> bool:
        return hasattr(self, "cv_plus_folds_") and not self._has_plus()

    def _leave_out_residuals(self):
        return self._cv_residuals_

    def _leave_out_block(self, X):
        per_fold = np.column_stack([model._raw_of(X)[:, 0] for model in self._cv_models_])
        return per_fold[:, self._cv_fold_, None]


class ConformalClassifier:
    """`predict_set` and `conformalize` of a classifier with probabilities (LAC scores)."""

    def conformalize(self, X, y):
        """Calibrate prediction sets on held-out rows (X, y), which the fit did not see: keeps
        their scores 1 − p̂_y(x) (`conformity_scores_`). Returns self."""
        proba = self._set_probabilities(X)
        y = column_or_1d(y, warn=True)
        check_consistent_length(proba, y)
        at = np.searchsorted(self.classes_, y)
        known = (at < self.classes_.size) & (self.classes_[np.minimum(at, self.classes_.size - 1)] == y)
        if not known.all():
            raise ValueError(f"conformalize: label {y[~known][0].tolist()!r} is not among the fitted classes {self.classes_.tolist()}")
        self.conformity_scores_ = 1.0 - proba[np.arange(y.size), at]
        return self

    def predict_set(self, X, coverage=0.9):
        """Conformal prediction sets: a boolean array (n_samples, n_classes), columns in `classes_`
        order, True for every class k with 1 − p̂_k(x) ≤ q̂, q̂ the ⌈c(n+1)⌉-th smallest
        calibration score (after `conformalize`)."""
        check_is_fitted(self)
        coverage = check_coverage(coverage)
        if not hasattr(self, "conformity_scores_"):
            raise NotFittedError("predict_set needs a calibration: call conformalize(X_cal, y_cal) on rows the "
                                 "fit did not see")
        q = kth_smallest(self.conformity_scores_, rank(coverage, self.conformity_scores_.size), axis=0)
        return 1.0 - self._set_probabilities(X) <= q

    def _set_probabilities(self, X):
        check_is_fitted(self)
        try:
            return np.asarray(self.predict_proba(X), dtype=np.float64)
        except (AttributeError, NotFittedError) as err:
            raise NotFittedError(f"conformal prediction sets need probabilities: fit {type(self).__name__} with "
                                 f"probability=True ({err})") from None
