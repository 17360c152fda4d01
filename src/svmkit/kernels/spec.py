"""Kernel specifications: which function, with which parameters resolved to numbers, and how
'scale' and 'auto' resolve γ from statistics of the data."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from svmkit._validation import is_finite_real
from svmkit.exceptions import warn
from svmkit.kernels.transforms import LINEAR, POLY, RBF, SIGMOID

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")
#: The compiled transform that turns inner products into each kernel's values.
_TRANSFORMS = {"linear": LINEAR, "poly": POLY, "rbf": RBF, "sigmoid": SIGMOID}


@dataclass(frozen=True)
class KernelSpec:
    """A kernel with its parameters resolved to numbers.

    linear  <x, z>
    poly    (gamma <x, z> + coef0) ** degree
    rbf     exp(-gamma ||x - z||^2)
    sigmoid tanh(gamma <x, z> + coef0)
    precomputed: X already holds kernel values K(x_i, x_j).
    callable: func(X, Z) returns the Gram matrix.
    """

    name: str
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0
    func: Callable | None = None

    @property
    def is_precomputed(self) -> bool:
        return self.name == "precomputed"

    @property
    def is_callable(self) -> bool:
        return self.func is not None

    @property
    def transform(self) -> int:
        """Code of the compiled transform from inner products to kernel values (`transforms`)."""
        return _TRANSFORMS[self.name]

    @property
    def uses_norms(self) -> bool:
        """Whether kernel values need the squared norms: ||a − b||² = ||a||² + ||b||² − 2<a, b>."""
        return self.name == "rbf"

    def values_set_by(self) -> str:
        """What sets this kernel's values, to name in an error: its parameters, or the input."""
        if self.is_callable:
            return f"the values the kernel callable {getattr(self.func, '__qualname__', repr(self.func))} returns"
        return {"linear": "the data, whose inner products the linear kernel's values are",
                "poly": f"gamma={self.gamma!r}, coef0={self.coef0!r}, degree={self.degree}",
                "rbf": f"gamma={self.gamma!r}", "sigmoid": f"gamma={self.gamma!r}, coef0={self.coef0!r}",
                "precomputed": "the precomputed kernel matrix"}[self.name]

    def of_self(self, sq_norms: np.ndarray) -> np.ndarray:
        """K(x, x) from ||x||², for the kernels defined by inner products and distances."""
        if self.name == "rbf":
            return np.ones_like(sq_norms)
        if self.name == "linear":
            return sq_norms
        if self.name == "poly":
            return (self.gamma * sq_norms + self.coef0) ** self.degree
        return np.tanh(self.gamma * sq_norms + self.coef0)


def feature_variance(X) -> float:
    """The variance of every value of X: dense, CSR, or a lazy array (Dask) that computes it where
    its blocks live."""
    if sp.issparse(X):
        mean = X.mean()
        return float(X.multiply(X).mean() - mean * mean)
    var = X.var()
    return float(var.compute() if hasattr(var, "compute") else var)


def _values_differ(X) -> bool:
    """Whether X holds two different values (dense, CSR or lazy)."""
    low, high = X.min(), X.max()
    low, high = (v.compute() if hasattr(v, "compute") else v for v in (low, high))
    return bool(high != low)


def check_gamma(gamma, name="gamma"):
    """gamma must be 'scale', 'auto' or a finite float ≥ 0."""
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValueError(f"{name} must be 'scale', 'auto' or a positive float, got {gamma!r}")
        return gamma
    if not is_finite_real(gamma):
        raise ValueError(f"{name} must be 'scale', 'auto' or a finite float, got {gamma!r}")
    if gamma < 0:
        raise ValueError(f"{name} must be non-negative, got {name}={gamma}")
    return gamma


def check_degree(degree, name="degree") -> int:
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {name}={degree!r}")
    return int(degree)


def check_coef0(coef0, name="coef0") -> float:
    if not is_finite_real(coef0):
        raise ValueError(f"{name} must be a finite float, got {name}={coef0!r}")
    return float(coef0)


def resolve_gamma(gamma, X) -> float:
    """Resolve scikit-learn's gamma: 'scale' = 1 / (n_features Var(X)), 'auto' = 1 / n_features."""
    n_features = X.shape[1]
    check_gamma(gamma)
    if isinstance(gamma, str):
        if gamma == "scale":
            var = feature_variance(X)
            scale = 1.0 / (n_features * var) if var != 0 else 1.0
            if np.isfinite(scale) and (var != 0 or not _values_differ(X)):
                return scale
            warn(f"gamma='scale': the variance of X ({var:g}) is too small for 1 / (n_features · Var X) "
                 "in float64, although its values differ; gamma=1.0 is used, on which the kernel is "
                 "nearly constant. Scale the data (e.g. with StandardScaler) or give gamma",
                 RuntimeWarning)
            return 1.0
        return 1.0 / n_features
    return float(gamma)


def check_kernel(kernel):
    """A kernel parameter must name one of KERNELS or be a callable."""
    if not callable(kernel) and kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS} or a callable, got kernel={kernel!r}")
    return kernel
