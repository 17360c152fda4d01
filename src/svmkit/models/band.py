"""Linear ε-band regression (Bi & Bennett 2003): the smallest band ε_inf, the hard ε-band SVR and its
reduction to hard-margin classification, and the objectives of the linear soft ε-band SVR.

The problems, as Bi & Bennett (2003) pose them:

- ε̄-band_inf: ε_inf = min ε̄ s.t. −ε̄ ≤ y_i − (wᵀx_i + b) ≤ ε̄, a linear program (the
  Chebyshev fit).
- Hard ε-band hyperplane, the linear hard ε-band SVR: min ½wᵀw s.t. |y_i − (wᵀx_i + b)| ≤ ε.
- Hard ε̄-band hyperplane: the hard-margin SVC min ½wᵀw + ½η² s.t.
  wᵀx_i + η(y_i + ε̄) + b ≥ 1 on D⁺ and wᵀx_i + η(y_i − ε̄) + b ≤ −1 on D⁻.
- The linear soft ε-band SVR (Vapnik 1995's linear ε-SVR): min ½wᵀw + C Σ (ξ_i + η_i) s.t. the
  band constraints relaxed by ξ_i, η_i ≥ 0.
- Its dual over (λ, μ) ∈ [0, C]ⁿ × [0, C]ⁿ with Σ (μ_i − λ_i) = 0.

All quantities are in the units of y (ε, ε̄, b) or of y per unit of x (w).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import linprog
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from svmkit._arrays import densify
from svmkit._validation import check_max_iter, check_real, one_of, store_parameters, validate_X, validate_Xy
from svmkit.models.conformal import ConformalRegressor, drop_calibration
from svmkit.models.plain_state import PlainState
from svmkit.models.smo.svc import SVC
from svmkit.models.smo.svr import SVR

#: HiGHS's default feasibility tolerances (1e-7) would limit ε_inf to about 7 digits.
_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}

#: Bisection steps on ε̄ and doublings of its bracket in HardBandSVR(method='reduction').
_MAX_BISECTIONS = 200
_MAX_DOUBLINGS = 60


def _check_data(X, y):
    """Float64 X (n, d) made dense and y (n,): at least one row, every value finite."""
    X, y = validate_Xy(None, X, y, y_numeric=True)
    return densify(X), y


def _centre_and_scale(v):
    """(m, s) with (v − m)/s in [−1, 1] along axis 0: the midrange and half-range, computed
    without overflow for any finite v; s = 1 where the values are all equal."""
    low, high = v.min(axis=0), v.max(axis=0)
    half = high / 2 - low / 2
    return low / 2 + high / 2, np.where(half > 0, half, 1.0)


def epsilon_inf_lp(X, y):
    """Solve the ε̄-band_inf linear program (Bi & Bennett 2003) with HiGHS; return SciPy's OptimizeResult.

    Variables z = (w_1, …, w_d, b, ε̄), w and b free, ε̄ ≥ 0; minimise ε̄ subject to the 2n rows
    A_ub z ≤ b_ub: first y_i − wᵀx_i − b ≤ ε̄ (i = 1…n), then wᵀx_i + b − y_i ≤ ε̄ (i = 1…n).
    `result.fun` is ε_inf, `result.x` is z and `result.ineqlin.marginals` (≤ 0) the dual
    certificate, all of this program. HiGHS solves it on each column of X and on y mapped to
    [−1, 1] (x' = (x − m)/s, y' = (y − m_y)/s_y), whose rows are those of this program divided
    by s_y: its marginals are this program's, its solution maps back as w = s_y w'/s,
    b = m_y + s_y b' − wᵀm, ε̄ = s_y ε̄'. Its absolute tolerances are then relative to the data's
    ranges, so ε_inf does not depend on their scale (X × 1e-9 or × 1e150 gives X's).
    X: (n, d) dense or CSR, y: (n,) real; a ValueError names an empty, mismatched or non-finite input.
    """
    X, y = _check_data(X, y)
    n, d = X.shape
    (mx, sx), (my, sy) = _centre_and_scale(X), _centre_and_scale(y)
    Xs, ys = (X - mx) / sx, (y - my) / sy
    ones = np.ones((n, 1))
    A_ub = np.block([[-Xs, -ones, -ones], [Xs, ones, -ones]])
    c = np.zeros(d + 2)
    c[-1] = 1.0
    res = linprog(c, A_ub=A_ub, b_ub=np.concatenate([-ys, ys]), bounds=[(None, None)] * (d + 1) + [(0, None)],
                  method="highs", options=_LP_OPTIONS)
    if res.status != 0:
        raise RuntimeError(f"the epsilon_inf linear program was not solved: {res.message}")
    w = sy * res.x[:d] / sx
    res.x = np.concatenate([w, [my + sy * res.x[d] - w @ mx, sy * res.x[-1]]])
    res.fun = sy * res.fun
    res.ineqlin.residual = sy * res.ineqlin.residual
    return res


def epsilon_inf(X, y):
    """The smallest ε for which an ε-band hyperplane exists (Bi & Bennett 2003),

        ε_inf = min over (w, b) of max_i |y_i − (wᵀx_i + b)|   (the Chebyshev, L∞ linear fit).

    Returns (ε_inf, w, b) with ε_inf in y's units, w of shape (d,), b a float. When every target
    is equal (one row included) the answer is exact, without the LP: ε_inf = 0, w = 0, b = y_1.
    Otherwise (w, b) is one minimiser: with collinear features, or when several hyperplanes
    reach the same L∞ error, others exist. X: (n, d) dense or CSR; y: (n,) real.
    """
    X, y = _check_data(X, y)
    if np.ptp(y) == 0:
        return 0.0, np.zeros(X.shape[1]), float(y[0])
    res = epsilon_inf_lp(X, y)
    return max(float(res.fun), 0.0), res.x[:-2].copy(), float(res.x[-2])


def _power_of_two_below(top) -> float:
    """2^-e with top = m·2^e, m in [1/2, 1) (1 for top = 0): a factor that scales exactly."""
    return float(np.ldexp(1.0, -int(np.frexp(top)[1]))) if top > 0 else 1.0


class BandReduction(NamedTuple):
    """Bi & Bennett's (2003) reduction for one ε̄: the hard ε-band hyperplane (coef, intercept) for
    epsilon = ε̄ − 1/η̄, read from the hard-margin SVC solution (w_bar, eta_bar, b_bar)."""
    coef: np.ndarray
    intercept: float
    epsilon: float
    w_bar: np.ndarray
    eta_bar: float
    b_bar: float


def _reduce(X, y, epsilon_bar, tol, max_iter):
    """Solve the Hard ε̄-band hyperplane SVC on S_ε̄ = D⁺ ∪ D⁻ and read the ε-band back."""
    n, d = X.shape
    Z = np.vstack([np.column_stack([X, y + epsilon_bar]), np.column_stack([X, y - epsilon_bar])])
    labels = np.concatenate([np.ones(n), -np.ones(n)])
    svc = SVC(kernel="linear", C=np.inf, tol=tol, max_iter=max_iter).fit(Z, labels)
    # classes_ is (−1, +1): coef_ is the normal pointing to D⁺, as in Bi & Bennett's constraints.
    normal = svc.coef_.ravel()
    w_bar, eta_bar, b_bar = normal[:d].copy(), float(normal[d]), float(svc.intercept_[0])
    return BandReduction(coef=-w_bar / eta_bar, intercept=-b_bar / eta_bar, epsilon=epsilon_bar - 1.0 / eta_bar,
                         w_bar=w_bar, eta_bar=eta_bar, b_bar=b_bar)


def hard_band_reduction(X, y, epsilon_bar, *, tol=1e-9, max_iter=-1):
    """Bi & Bennett's (2003) theorem on the hard ε̄-band hyperplane, for a given ε̄ > ε_inf.

    Solves the hard-margin SVC (svmkit.SVC, kernel='linear', C=inf) on the d + 1 dimensional
    set S_ε̄ = {((x_i, y_i + ε̄), +1)} ∪ {((x_i, y_i − ε̄), −1)} for (w̄, η̄, b̄); then η̄ > 0,
    ε = ε̄ − 1/η̄ satisfies ε_inf ≤ ε < ε̄, and (w*, b*) = (−w̄/η̄, −b̄/η̄) solves the hard
    ε-band problem min ½wᵀw s.t. |y_i − (wᵀx_i + b)| ≤ ε. Returns a BandReduction.

    Their first theorem: y = wᵀx + b is a hard ε̄-band hyperplane if and only if it has D⁺
    and D⁻ strictly on either side; so ε̄ ≤ ε_inf, where no such line exists, raises a ValueError.
    Near ε_inf, ε = ε_inf exactly on a whole range of ε̄ (the band is then the Chebyshev fit). The SVC's
    dual grows like η̄² = 1/(ε̄ − ε)², so ε̄ just above ε_inf makes a slow, ill-conditioned fit.
    tol, max_iter: the SVC's.
    """
    X, y = _check_data(X, y)
    epsilon_bar = check_real(epsilon_bar, "epsilon_bar", low=0)
    eps_inf = epsilon_inf(X, y)[0]
    if epsilon_bar <= eps_inf:
        raise ValueError(f"epsilon_bar={epsilon_bar!r} must exceed epsilon_inf={eps_inf!r}: otherwise D+ and D- "
                         "cannot be strictly separated and no hard epsilon_bar-band hyperplane exists")
    return _reduce(X, y, epsilon_bar, check_real(tol, "tol", low=0), check_max_iter(max_iter))


#: Where 'auto' puts ε between ε_inf and the width (max y − min y)/2 at which w = 0 fits.
AUTO_FRACTION = 0.1


class HardBandSVR(ConformalRegressor, PlainState, RegressorMixin, BaseEstimator):
    """Linear hard ε-band support vector regression (Bi & Bennett 2003):

        min ½‖w‖²  s.t.  |y_i − (wᵀx_i + b)| ≤ ε,  i = 1…n,   h(x) = wᵀx + b.

    It has a solution for ε > ε_inf (Bi & Bennett 2003), with w unique. For ε ≥ (max y − min y)/2
    the solution is w = 0 with any b in [max y − ε, min y + ε]; both methods then return the
    exact answer w = 0, b = (max y + min y)/2, the limit of the reduction as ε̄ → ∞.

    Parameters
    ----------
    epsilon : float or 'auto', default 'auto'
        Half-width of the band, in y's units; must exceed ε_inf (see `epsilon_inf`). 'auto':
        ε_inf + 0.1·((max y − min y)/2 − ε_inf), a band that exists on any data and hugs it.
    method : {'smo', 'reduction'}, default 'smo'
        'smo': svmkit.SVR(kernel='linear', C=inf, epsilon=ε). 'reduction': Bi & Bennett's hard
        ε̄-band hyperplane SVC (see `hard_band_reduction`), with ε̄ found by bisection so that
        ε̄ − 1/η̄ = ε; ε(ε̄) is continuous and nondecreasing, and ε̄ = ε gives ε(ε̄) < ε.
    tol : float, default 1e-9
        Stopping tolerance of the SMO solver (SVR's or SVC's). Its kernel rows are float32, as
        LIBSVM's, so (w*, b*) is good to about 1e-7 relative whatever tol; the reduction's ε
        carries η̄'s relative error times ε̄ − ε, so it degrades as ε nears (max y − min y)/2.
    max_iter : int, default -1
        Iteration limit of each SMO solve; -1: SVC's safety cap, max(10⁷, 100·n).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        w*.
    intercept_ : float
        b*.
    epsilon_inf_ : float
        ε_inf of the training set.
    epsilon_ : float
        The band's half-width ε (resolved from 'auto').
    n_iter_ : int
        SMO iterations ('smo'), or the hard-margin SVC solves of the bisection ('reduction').
    epsilon_bar_ : float
        ('reduction' only) the ε̄ of the SVC; inf when w* = 0.
    eta_bar_ : float
        ('reduction' only) η̄, the y-component of the SVC's normal; ε = ε̄ − 1/η̄. 0 when w* = 0.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from svmkit.models.band import HardBandSVR
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0.0, 1.0, 1.0, 3.0])
    >>> model = HardBandSVR(epsilon=0.75).fit(x, y)
    >>> round(model.epsilon_inf_, 6), bool(np.abs(y - model.predict(x)).max() <= 0.75 + 1e-6)
    (0.5, True)
    """

    _non_finite = ("epsilon_bar_",)

    def __init__(self, *, epsilon="auto", method="smo", tol=1e-9, max_iter=-1):
        store_parameters(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y):
        """Fit w*, b*. X: (n_samples, n_features) dense or CSR; y: (n_samples,) real."""
        auto = isinstance(self.epsilon, str) and self.epsilon == "auto"
        epsilon = None if auto else check_real(self.epsilon, "epsilon", low=0, low_inclusive=True)
        one_of("smo", "reduction")(self.method, "method")
        tol = check_real(self.tol, "tol", low=0)
        max_iter = check_max_iter(self.max_iter)
        X, y = validate_Xy(self, X, y, y_numeric=True)
        drop_calibration(self)
        for name in ("epsilon_bar_", "eta_bar_"):  # the reduction's, from an earlier fit
            if hasattr(self, name):
                delattr(self, name)
        self.epsilon_inf_ = epsilon_inf(X, y)[0]
        if auto:
            epsilon = self.epsilon_inf_ + AUTO_FRACTION * (np.ptp(y) / 2 - self.epsilon_inf_)
            if not epsilon > self.epsilon_inf_:  # no band narrower than the constant's (to rounding)
                epsilon = np.ptp(y) / 2
        self.epsilon_ = epsilon
        if epsilon >= np.ptp(y) / 2:
            self.coef_, self.intercept_ = np.zeros(X.shape[1]), float((y.max() + y.min()) / 2)
            self.n_iter_ = 0
            if self.method == "reduction":
                self.epsilon_bar_, self.eta_bar_ = np.inf, 0.0
            return self
        if epsilon < self.epsilon_inf_:
            raise ValueError(f"epsilon={self.epsilon!r} is below epsilon_inf={self.epsilon_inf_!r}: no hyperplane "
                             "fits every target within epsilon, so the hard epsilon-band has no solution; "
                             "widen epsilon")
        if epsilon == self.epsilon_inf_:
            raise ValueError(f"epsilon={self.epsilon!r} equals epsilon_inf={self.epsilon_inf_!r}: only the Chebyshev "
                             "fit reaches it, and the hard epsilon-band needs epsilon > epsilon_inf; widen epsilon")
        if self.method == "smo":
            # the SVR on X·2^-e, max |x| in [1/2, 1), whose band is (w 2^e, b) exactly: its kernel
            # rows (float32) then hold the products of any finite X
            scale = _power_of_two_below(abs(X).max())
            svr = SVR(kernel="linear", C=np.inf, epsilon=epsilon, tol=tol, max_iter=max_iter).fit(X * scale, y)
            self.coef_, self.intercept_ = svr.coef_.ravel() * scale, float(svr.intercept_[0])
            self.n_iter_ = int(np.max(svr.n_iter_))
            return self
        self.epsilon_bar_, fit, self.n_iter_ = self._bisect(densify(X), y, epsilon, tol, max_iter)
        self.coef_, self.intercept_, self.eta_bar_ = fit.coef, fit.intercept, fit.eta_bar
        return self

    @staticmethod
    def _bisect(X, y, epsilon, tol, max_iter):
        """(ε̄, the reduction at ε̄, the SVC solves made) with ε̄ − 1/η̄ = ε: bisection keeps
        ε(lo) < ε ≤ ε(hi), returns hi."""
        lo, gap = epsilon, np.ptp(y)
        solves = 0
        for _ in range(_MAX_DOUBLINGS):
            solves += 1
            hi = epsilon + gap
            best = _reduce(X, y, hi, tol, max_iter)
            if best.epsilon >= epsilon:
                break
            lo, gap = hi, 2 * gap
        else:
            raise RuntimeError(f"no epsilon_bar below {hi:.6g} gives epsilon={epsilon!r} through the reduction; "
                               "use method='smo'")
        for _ in range(_MAX_BISECTIONS):
            mid = (lo + hi) / 2
            if not lo < mid < hi:
                break
            fit = _reduce(X, y, mid, tol, max_iter)
            solves += 1
            if fit.epsilon < epsilon:
                lo = mid
            else:
                hi, best = mid, fit
        return hi, best, solves

    def predict(self, X):
        """h(x) = w*ᵀx + b* for every row of X, (n_samples, n_features) dense or CSR."""
        check_is_fitted(self)
        X = validate_X(self, X, reset=False)
        return np.asarray(X @ self.coef_ + self.intercept_)


def soft_band_primal(X, y, w, b, C, epsilon):
    """Objective of the linear soft ε-band SVR (Vapnik 1995; Bi & Bennett 2003) at (w, b) with the optimal slacks:

        ½‖w‖² + C Σ_i max(0, |y_i − (wᵀx_i + b)| − ε).

    X: (n, d) dense or CSR; y: (n,); w: (d,); b, C > 0 and ε ≥ 0 scalars. In y's units squared
    per unit of x squared for the first term, C times y's units for the second.
    """
    X, y = _check_data(X, y)
    w = np.asarray(w, dtype=np.float64).ravel()
    if w.shape != (X.shape[1],):
        raise ValueError(f"w must have one entry per feature ({X.shape[1]}), got shape {w.shape}")
    C = check_real(C, "C", low=0)
    epsilon = check_real(epsilon, "epsilon", low=0, low_inclusive=True)
    residual = y - (X @ w + check_real(b, "b"))
    return float(0.5 * w @ w + C * np.maximum(0.0, np.abs(residual) - epsilon).sum())


def soft_band_dual(X, y, alpha, alpha_star, epsilon):
    """Objective of the linear soft ε-band SVR's dual (Vapnik 1995; to be maximised) at μ = alpha, λ = alpha_star:

        −½ ‖Σ_i (μ_i − λ_i) x_i‖² − ε Σ_i (μ_i + λ_i) + Σ_i y_i (μ_i − λ_i).

    μ_i multiplies y_i − (wᵀx_i + b) ≤ ε + ξ_i (target above the fit), λ_i the constraint below,
    so w = Σ (μ_i − λ_i) x_i; LIBSVM's (α, α*) are (μ, λ) and its dual_coef_ is μ − λ. The value
    is the dual objective when Σ (μ_i − λ_i) = 0 and 0 ≤ μ_i, λ_i ≤ C; equal to the primal's
    optimum at the solution. X: (n, d) dense or CSR; y, alpha, alpha_star: (n,) with alpha,
    alpha_star ≥ 0; ε ≥ 0.
    """
    X, y = _check_data(X, y)
    mu = np.asarray(alpha, dtype=np.float64).ravel()
    lam = np.asarray(alpha_star, dtype=np.float64).ravel()
    for name, value in (("alpha", mu), ("alpha_star", lam)):
        if value.shape != y.shape:
            raise ValueError(f"{name} must have one entry per sample ({y.size}), got shape {value.shape}")
        bad = np.flatnonzero(~(np.isfinite(value) & (value >= 0)))
        if bad.size:
            raise ValueError(f"{name} must be finite and >= 0, got {name}[{bad[0]}]={float(value[bad[0]])!r}")
    epsilon = check_real(epsilon, "epsilon", low=0, low_inclusive=True)
    beta = mu - lam
    w = X.T @ beta
    return float(-0.5 * w @ w - epsilon * (mu + lam).sum() + y @ beta)
