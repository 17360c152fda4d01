"""The fitted state of the models whose prediction is wᵀx + b (the linear SVMs, the hard ε-band):
a few named arrays, saved as they are and checked when read back."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from svmkit._arrays import state_value, stored_values
from svmkit.parallel.blocks import LazyOnDask
from svmkit.registry import fitted_of


class PlainState(LazyOnDask):
    """`fitted_state` / `set_fitted_state` over the names of the model's entry in svmkit.registry
    (`_required` of them needed), with coef_ and intercept_ checked against n_features_in_ and
    each other; prediction on a Dask array or dataframe is lazy (`LazyOnDask`)."""

    _required: tuple = ("coef_", "intercept_", "n_features_in_")
    #: Attributes whose NaN or ∞ has a meaning (the reduction's ε̄ = ∞, an L1 solver's missing dual).
    _non_finite: tuple = ()

    def fitted_state(self) -> dict:
        """The fitted attributes a model file keeps, by name."""
        check_is_fitted(self)
        return {name: getattr(self, name) for name in fitted_of(type(self)) if hasattr(self, name)}

    def set_fitted_state(self, state: dict):
        """Give this estimator the fitted attributes in `state`; a ValueError names the first
        that is unknown, missing, not finite or of the wrong shape."""
        unknown = sorted(set(state) - set(fitted_of(type(self))))
        if unknown:
            raise ValueError(f"not fitted attributes of a {type(self).__name__}: {unknown}")
        missing = [name for name in self._required if name not in state]
        if missing:
            raise ValueError(f"missing arrays {missing}")
        state = {name: state_value(value) for name, value in state.items()}
        for name, value in state.items():
            a = stored_values(value)
            if a.dtype.kind == "f" and name not in self._non_finite and not np.all(np.isfinite(a)):
                raise ValueError(f"{name} holds a value that is not a finite number")
        n_features, coef, intercept = state["n_features_in_"], np.asarray(state["coef_"]), np.asarray(state["intercept_"])
        if not isinstance(n_features, int) or n_features < 1:
            raise ValueError(f"n_features_in_ {n_features!r} is not a positive integer")
        if coef.dtype.kind != "f" or coef.ndim not in (1, 2) or coef.shape[-1] != n_features:
            raise ValueError(f"coef_ of shape {coef.shape} does not have n_features_in_={n_features} columns")
        problems = 1 if coef.ndim == 1 else coef.shape[0]
        if intercept.ndim > 1 or intercept.size not in (1, problems):
            raise ValueError(f"intercept_ of shape {intercept.shape} for coef_ of shape {coef.shape}")
        self._check_state(state, problems)
        vars(self).update(state)
        return self

    def _check_state(self, state: dict, problems: int) -> None:
        """Model-specific checks of a state read back (`problems`: coef_'s rows)."""
