"""ν-support vector classification (Schölkopf et al. 2000), one-vs-one, solved as LIBSVM does.

Each class pair solves min ½ αᵀQα s.t. yᵀα = 0, Σα = ν Σw, 0 ≤ α_i ≤ w_i with the solver's ν
mode (selection within each class, two thresholds r1, r2); dividing α and ρ by r = (r1 + r2)/2
gives the C-SVC solution for C = 1/r, which is what prediction uses. The bounds w_i are the
sample weights: class weights scale C, which ν-SVC has none of, so LIBSVM (solve_nu_svc) and
scikit-learn's NuSVC ignore them, and so does this one.
"""

from __future__ import annotations

import numpy as np

from svmkit._validation import check_nu
from svmkit.exceptions import warn
from svmkit.models import duals
from svmkit.models.svc import BaseSVC
from svmkit.options import reads
from svmkit.solvers.smo_batch import DualBatch


#: The smallest |r| whose scales of ν-SVC's solution to C-SVC's, 1/r (α, ρ) and 1/r² (the
#: objective), stay finite: below it (ν near 0, e.g. 1e-200) they overflow to inf and NaN.
_SMALLEST_R = 1 / np.sqrt(np.finfo(np.float64).max)


class NuSVC(BaseSVC):
    """ν-SVC, scikit-learn compatible, exact against LIBSVM (-s 1).

    Each class pair solves min ½ αᵀQα, yᵀα = 0, Σα = ν Σw, 0 ≤ α_i ≤ w_i (Schölkopf et al.
    2000); dividing α and ρ by r gives the C-SVC solution for C = 1/r.

    Parameters
    ----------
    nu : float in (0, 1], default 0.5
        Upper bound on the fraction of margin errors, lower bound on the fraction of support
        vectors. Infeasible when ν (n_a + n_b)/2 > min(n_a, n_b) (weighted counts) for a pair:
        fit then raises "specified nu is infeasible" naming the pair.
    class_weight : dict, 'balanced' or None
        Ignored, with a warning, as by scikit-learn's NuSVC and LIBSVM's `svm-train -s 1 -w`
        (class weights scale C, and ν-SVC has no C); `class_weight_` holds the weights, as
        scikit-learn's does. For a weighted ν-SVC pass each row's class weight as
        `sample_weight`, which scales its bound w_i.
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, verbose, max_iter, warm_start :
        As for `SVC`.
    options : Options or None, default None
        `svmkit.Options`; reads device only.
    probability, decision_function_shape, break_ties, random_state :
        As for `SVC`; a calibration fold's pair is a ν-SVC with the same ν, which must be
        feasible on the fold as on the whole pair.

    Attributes
    ----------
    As `SVC`'s.

    Examples
    --------
    >>> import svmkit
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> model = svmkit.NuSVC(nu=0.1).fit(X, y)
    >>> model.predict(X[-2:]).tolist()
    [2, 2]
    """

    _scaled_params = ("nu",)
    _constraints = {**BaseSVC._constraints, "nu": check_nu, "options": reads("NuSVC", "device")}

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability=False, tol=1e-3, cache_size=1024, class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", break_ties=False, random_state=None, warm_start=False, options=None):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.warm_start = warm_start
        self.options = options

    def _row_weights(self, sample_weight, y_enc):
        if self.class_weight is not None:
            warn("NuSVC ignores class_weight, as scikit-learn's NuSVC and LIBSVM's svm-train -s 1 do (class "
                 "weights scale C, which nu-SVC has none of); for a weighted nu-SVC pass "
                 "sample_weight=sklearn.utils.class_weight.compute_sample_weight(class_weight, y)",
                 UserWarning)
        return sample_weight

    def _solve_pair(self, rows, kidx, ypair, weight, pair, start):
        w_pos, w_neg = weight[ypair > 0].sum(), weight[ypair < 0].sum()
        if self.nu * (w_pos + w_neg) / 2 > min(w_pos, w_neg):
            raise ValueError(f"specified nu is infeasible for the class pair {self._pair_label(pair)}: "
                             f"nu={self.nu} needs nu*(n_a+n_b)/2 <= min(n_a, n_b), with (weighted) "
                             f"counts n_a={w_pos:g}, n_b={w_neg:g}")
        problem, alpha0 = duals.nu_svc(ypair, weight, self.nu, kidx)
        res = self._solve(problem, rows, alpha0, start)
        if res.r == 0:  # LIBSVM divides by r regardless (a negative r too, as here)
            raise ValueError(f"nu-SVC's margin r is {res.r:g} for the class pair {self._pair_label(pair)}: the "
                             "kernel does not tell the classes apart (e.g. it is constant on their rows)")
        if abs(res.r) < _SMALLEST_R:
            raise ValueError(f"nu={self.nu!r} is too small for the class pair {self._pair_label(pair)}: nu-SVC's "
                             f"margin r = {res.r:g} makes its C = 1/r and objective (1/r²) overflow float64; use a "
                             "larger nu")
        return problem, res, 1 / res.r

    def _dual_batch(self, ypair, weight, kidx, offsets):
        owner = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        w_pos = np.bincount(owner, weights=np.where(ypair > 0, weight, 0.0), minlength=offsets.size - 1)
        w_neg = np.bincount(owner, weights=np.where(ypair < 0, weight, 0.0), minlength=offsets.size - 1)
        if np.any(self.nu * (w_pos + w_neg) / 2 > np.minimum(w_pos, w_neg)):
            return None  # `_solve_pair` names the infeasible pair
        posed = duals.nu_svc_batch(ypair, weight, self.nu, kidx, owner)
        return None if posed is None else DualBatch(posed[0], offsets, posed[1])

    def _batch_scale(self, res):
        return None if np.any(np.abs(res.r) < _SMALLEST_R) else 1 / res.r  # `_solve_pair` names the pair

    def _pair_summary(self, res, pair):
        return (f"C = {1 / res.r:f}",)
