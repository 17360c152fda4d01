"""Exact Shapley values (Shapley 1953) of the kernel models' decision functions
f(x) = Σ_s W[s, o] k(x, z_s) + b_o, in polynomial time where the kernel is a product over the
features (RBF: k(x, z) = Π_j exp(−γ (x_j − z_j)²); Mohammadi, Chau & Muandet 2025) and in
closed form where it is a sum (linear)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils.validation import check_is_fitted

from svmkit._arrays import densify
from svmkit._core import shapley as _shapley
from svmkit._threads import stop_on_ctrl_c
from svmkit._validation import validate_X
from svmkit.models.expansion import KernelExpansion
from svmkit.models.smo.formulations import pair_classes
from svmkit.models.smo.svc import BaseSVC

#: The value functions: v(x, S) = E_β f(x_S, β_S̄) over background rows β, as `shap` estimates,
#: or the model's own expansion on the kernel restricted to S.
VALUES = ("interventional", "functional")
#: Background rows taken from the centres when none are given.
DEFAULT_BACKGROUND = 100


@dataclass
class ShapleyValues:
    """Attributions of f(x) to the features of every row: `values` (n_rows × n_features, with a
    last axis of outputs when the model has several), `base_values` (one per output) with
    values.sum(axis=1) + base_values = f(X); `data` the rows explained, `feature_names`,
    `output_names` (None for one output), `value` the value function. `classes` and `pairs`
    (first and second class of each output) when the outputs are one-vs-one class pairs."""

    values: np.ndarray
    base_values: np.ndarray
    data: np.ndarray
    feature_names: list
    output_names: list | None
    value: str
    classes: np.ndarray | None = None
    pairs: tuple | None = None

    def per_class(self) -> ShapleyValues:
        """The attributions of each class's summed one-vs-one decision values, signed toward it:
        f_c = Σ_{b} f_(c, b) − Σ_{a} f_(a, c), the confidence LIBSVM and scikit-learn add to the
        votes of decision_function_shape='ovr' (before squashing). Linear in the pairs' values,
        so its Shapley values are the same sums of theirs."""
        if self.pairs is None:
            raise ValueError("per_class needs one-vs-one class pairs as outputs (SVC, NuSVC, LSSVC(multi_class='ovo') "
                             "with three or more classes)")
        first, second = self.pairs
        M = np.zeros((first.size, self.classes.size))
        M[np.arange(first.size), first] = 1.0
        M[np.arange(first.size), second] = -1.0
        return ShapleyValues(self.values @ M, self.base_values @ M, self.data, self.feature_names,
                             [str(c) for c in self.classes], self.value)


def _expansion(model):
    """(W, b, output names, classes, pairs) of the decision values explained: one column per
    output, binary SVC's sign turned so that > 0 means classes_[1] as its decision_function."""
    W, b = model.decision_expansion()
    classes = getattr(model, "classes_", None)
    if W.shape[1] == 1:
        sign = -1.0 if isinstance(model, BaseSVC) else 1.0
        return sign * W, sign * b, None, None, None
    if isinstance(model, BaseSVC) or getattr(model, "multi_class", None) == "ovo":
        first, second = pair_classes(classes.size)
        return W, b, [f"{classes[a]} vs {classes[c]}" for a, c in zip(first, second)], classes, (first, second)
    if classes is not None:
        return W, b, [str(c) for c in classes], None, None
    return W, b, [f"output {o}" for o in range(W.shape[1])], None, None


def _check_model(model):
    if not isinstance(model, KernelExpansion):
        raise TypeError(f"shapley_values explains svmkit's kernel models (SVC, NuSVC, SVR, NuSVR, OneClassSVM, "
                        f"KernelRidge, LSSVC, LSSVR, KernelLogisticRegression, KernelQuantileRegressor), not a "
                        f"{type(model).__name__}; use the shap package for others")
    check_is_fitted(model)
    kernel = model.kernel
    if kernel not in ("rbf", "linear"):
        name = getattr(kernel, "__qualname__", repr(kernel)) if callable(kernel) else repr(kernel)
        raise ValueError(f"exact Shapley values need a kernel that is a product (rbf) or a sum (linear) of one kernel "
                         f"per feature; the {name} kernel is not, so no coalition's value factors over the features. "
                         f"Use the shap package (shap.KernelExplainer, or shap.ExactExplainer for few features) on "
                         f"the model's decision_function or predict")


def _background(model, background, Z):
    """The background rows, dense: given, or at most DEFAULT_BACKGROUND of the centres."""
    if background is None:
        return Z[np.unique(np.linspace(0, Z.shape[0] - 1, min(DEFAULT_BACKGROUND, Z.shape[0])).astype(np.int64))]
    width = np.shape(background)[1] if np.ndim(background) == 2 else None
    if width == model.n_features_in_ and np.shape(background)[0] == 0:
        raise ValueError("background has no rows: the interventional value averages over at least one")
    if width != model.n_features_in_:
        raise ValueError(f"background must be rows of the model's {model.n_features_in_} features, got shape "
                         f"{np.shape(background)}")
    return np.ascontiguousarray(densify(validate_X(model, background, reset=False)), dtype=np.float64)


def _quadrature(d: int) -> np.ndarray:
    """Gauss–Legendre nodes (row 0) and weights (row 1) on [0, 1], exact for polynomials of
    degree d − 1."""
    nodes, weights = np.polynomial.legendre.leggauss(max(1, (d + 1) // 2))
    return np.ascontiguousarray(np.vstack([(nodes + 1) / 2, weights / 2]))


def _empty_coalition(model, B, Z) -> np.ndarray:
    """Each centre's kernel value with no feature in the coalition: its mean over the background
    rows β (interventional), or the empty product 1 (RBF) and empty sum 0 (linear)."""
    if B.shape[0]:
        K = B @ Z.T if model.kernel == "linear" else np.exp(-model.gamma_ * cdist(B, Z, "sqeuclidean"))
        return K.mean(axis=0)
    return np.full(Z.shape[0], 1.0 if model.kernel == "rbf" else 0.0)


def _rbf(X, Z, W, B, gamma):
    """Shapley values (n × d × k) of Σ_s W[s] exp(−γ ||x − z_s||²) for the rows of X (dense);
    Ctrl-C stops the compiled loop."""
    n, d = X.shape
    out = np.empty((n, d, W.shape[1]))
    with stop_on_ctrl_c() as stop:
        _shapley.rbf_values(X, Z, np.ascontiguousarray(W), B, _quadrature(d), float(gamma), stop,
                            out.reshape(n, -1))
    return out


def shapley_values(model, X, background=None, value="interventional") -> ShapleyValues:
    """Exact Shapley values of a fitted kernel model's decision values f(x) for every row of X.

    With φ_j(x) = Σ_{S ⊆ N∖{j}} |S|! (d − |S| − 1)! / d! · (v(x, S ∪ {j}) − v(x, S)) (Shapley 1953):

    - value='interventional' (what `shap` estimates, Lundberg & Lee 2017):
      v(x, S) = mean over the background rows β of f(x_S, β_S̄), base value mean f(β);
    - value='functional': v(x, S) = Σ_s W[s] k_S(x_S, z_sS) + b, the expansion on the kernel
      restricted to the features in S (Mohammadi, Chau & Muandet 2025), base value Σ_s W[s] + b
      for RBF, b for linear.

    RBF: each centre's term is a product over the features, Π_{j∈S} a_j Π_{j∉S} c_j, whose
    Shapley values are (a_j − c_j) ∫₀¹ Π_{l≠j} (c_l + q (a_l − c_l)) dq, integrated exactly by
    Gauss–Legendre quadrature: O(d²) per (row, support vector, background row), compiled.
    Linear: φ_j = w_j (x_j − mean β_j) (interventional) or w_j x_j (functional).

    f is the model's decision function: SVC and NuSVC give one output per class pair (LIBSVM's
    one-vs-one decision values, > 0 for the pair's first class; two classes: one output, > 0
    for classes_[1], as decision_function), and `ShapleyValues.per_class` gives each class's
    summed pair values signed toward it; KernelLogisticRegression its logits; KernelRidge every
    output; the regressors their prediction; OneClassSVM its decision_function.

    X and background: dense or sparse, with the model's features. background None: up to 100
    of the model's centres (support vectors), evenly spaced. Returns `ShapleyValues`, whose
    attributions and base values add up to f(x) exactly (efficiency), to rounding.
    """
    _check_model(model)
    if value not in VALUES:
        raise ValueError(f"value must be one of {VALUES}, got value={value!r}")
    data = np.ascontiguousarray(densify(validate_X(model, X, reset=False)), dtype=np.float64)
    W, b, output_names, classes, pairs = _expansion(model)
    Z = np.ascontiguousarray(densify(model.support_vectors_), dtype=np.float64)
    d = data.shape[1]
    if value == "functional" and background is not None:
        raise ValueError("value='functional' takes no background (it restricts the kernel to the coalition); "
                         "give background= with value='interventional'")
    B = _background(model, background, Z) if value == "interventional" else np.zeros((0, d))
    if model.kernel == "linear":
        w = W.T @ Z
        phi = (data - (B.mean(axis=0) if B.shape[0] else 0.0))[:, :, None] * w.T[None, :, :]
    else:
        phi = _rbf(data, Z, W, B, model.gamma_)
    base = _empty_coalition(model, B, Z) @ W + b
    names = list(getattr(model, "feature_names_in_", [f"x{j}" for j in range(d)]))
    if output_names is None:
        phi, base = phi[:, :, 0], base[0]
    return ShapleyValues(phi, np.asarray(base), data, names, output_names, value, classes, pairs)
