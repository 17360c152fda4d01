"""The formulations of the SMO-type models: for each model, its dual problems posed from its
parameters and targets, how the solver's α and ρ are read back into the fitted attributes, and
the summary LIBSVM prints. Every dual is the solver's one form

    min ½ αᵀQα + pᵀα,  yᵀα = Δ,  0 ≤ α_i ≤ U_i,  Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]),

with a feasible starting point α⁰ (which sets Δ). `weight` holds each row's C_i (C times its
sample and class weights). The ν forms start where LIBSVM does, filling bounds in row order
(Chang & Lin 2011, §2 and §4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from svmkit._validation import (class_weights, encode_classes, positive_rows, validate_sample_weight, validate_X,
                                validate_Xy)
from svmkit.exceptions import NotSeparableError, TubeTooNarrowError, warn
from svmkit.kernels.kinds import NOT_FINITE
from svmkit.models.expansion import Targets
from svmkit.solvers.smo.feasibility import fits_tube, is_separable
from svmkit.solvers.smo.solver import DualProblem, DualResult, UnboundedDualError
from svmkit.solvers.smo.solver import BatchResult, DualBatch, batchable, solve_batch
from svmkit.solvers.smo.starts import Posed, Settings

#: Largest problem whose hard-constraint feasibility (C = inf) is checked by linear programming.
LP_MAX_ROWS = 3000
#: The smallest |r| whose scales of ν-SVC's solution to C-SVC's, 1/r (α, ρ) and 1/r² (the
#: objective), stay finite: below it (ν near 0, e.g. 1e-200) they overflow to inf and NaN.
_SMALLEST_R = 1 / np.sqrt(np.finfo(np.float64).max)


def _fill(caps: np.ndarray, total: float) -> np.ndarray:
    """α_i = min(cap_i, what is left of `total`), in order: LIBSVM's ν starting point."""
    before = np.concatenate([[0.0], np.cumsum(caps)[:-1]])
    return np.clip(total - before, 0.0, caps)


def c_svc(y: np.ndarray, weight: np.ndarray, kidx: np.ndarray):
    """C-SVC (Chang & Lin 2011, §2.1): p = −1, yᵀα = 0, U_i = C_i."""
    return DualProblem(p=-np.ones(y.size), y=y, upper=weight, kidx=kidx), None


def nu_svc(y: np.ndarray, weight: np.ndarray, nu: float, kidx: np.ndarray):
    """ν-SVC (Schölkopf et al. 2000) in LIBSVM's form before rescaling: p = 0, yᵀα = 0,
    Σα = ν Σw, 0 ≤ α_i ≤ w_i; the solution divided by r is the C-SVC one with C = 1/r."""
    alpha0 = np.zeros(y.size)
    half = nu * weight.sum() / 2
    for cls in (y > 0, y < 0):
        alpha0[cls] = _fill(weight[cls], half)
    return DualProblem(p=np.zeros(y.size), y=y, upper=weight, kidx=kidx, nu_mode=True), alpha0


def nu_svc_batch(y: np.ndarray, weight: np.ndarray, nu: float, kidx: np.ndarray, owner: np.ndarray):
    """`nu_svc` of many problems at once (variable i of problem owner[i], each problem's
    variables of a class in their order), None unless every weight is a whole number: its
    sums are then exact in any order, so each start is the one `nu_svc` gives alone."""
    if not np.array_equal(weight, np.round(weight)) or weight.sum() >= 2**53:
        return None
    half = nu * np.bincount(owner, weights=weight)[owner] / 2
    group = 2 * owner + (y < 0)
    order = np.argsort(group, kind="stable")
    w = weight[order]
    earlier = np.cumsum(w) - w  # the weight before each variable, over every group
    starts = np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1]])
    before = np.empty(y.size)
    before[order] = earlier - np.repeat(earlier[starts], np.diff(np.r_[starts, y.size]))
    alpha0 = np.clip(half - before, 0.0, weight)
    return DualProblem(p=np.zeros(y.size), y=y, upper=weight, kidx=kidx, nu_mode=True), alpha0


def epsilon_svr(target: np.ndarray, weight: np.ndarray, epsilon: float, kidx: np.ndarray):
    """ε-SVR (Vapnik 1995; Chang & Lin 2011, §2.4) over (α, α*): p = (ε − t, ε + t), y = (+1, −1), yᵀα = 0."""
    n = target.size
    p = np.concatenate([epsilon - target, epsilon + target])
    y = np.concatenate([np.ones(n), -np.ones(n)])
    return DualProblem(p=p, y=y, upper=np.tile(weight, 2), kidx=np.tile(kidx, 2)), None


def quantile(target: np.ndarray, weight: np.ndarray, tau: float, kidx: np.ndarray):
    """Kernel quantile regression at level τ (Takeuchi, Le, Sears & Smola 2006): the dual of the
    pinball loss, max aᵀt − ½aᵀKa with C_i(τ − 1) ≤ a_i ≤ C_i τ and Σa = 0, written over
    (α, α*) with a = α − α* as ε-SVR's with ε = 0 and the boxes U = (τ C_i, (1 − τ) C_i)."""
    n = target.size
    y = np.concatenate([np.ones(n), -np.ones(n)])
    return DualProblem(p=np.concatenate([-target, target]), y=y, upper=np.concatenate([tau * weight, (1 - tau) * weight]),
                       kidx=np.tile(kidx, 2)), None


def nu_svr(target: np.ndarray, weight: np.ndarray, nu: float, kidx: np.ndarray):
    """ν-SVR (Schölkopf et al. 2000) over (α, α*): p = (−t, t), Σα + Σα* = ν Σ C_i; the tube width
    ε comes out as −r."""
    n = target.size
    start = _fill(weight, nu * weight.sum() / 2)
    y = np.concatenate([np.ones(n), -np.ones(n)])
    problem = DualProblem(p=np.concatenate([-target, target]), y=y, upper=np.tile(weight, 2),
                          kidx=np.tile(kidx, 2), nu_mode=True)
    return problem, np.tile(start, 2)


def one_class(weight: np.ndarray, nu: float, kidx: np.ndarray):
    """One-class SVM (Schölkopf et al. 2001): p = 0, y = +1, Σα = ν Σw, 0 ≤ α_i ≤ w_i."""
    n = weight.size
    problem = DualProblem(p=np.zeros(n), y=np.ones(n), upper=weight, kidx=kidx)
    return problem, _fill(weight, nu * weight.sum())


def ragged_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of range(s, s + n) for every (s, n) of (starts, lengths)."""
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1] if ends.size else 0)


def class_pairs(n_classes: int):
    """The one-vs-one class pairs (a, b), a < b, in LIBSVM's order (0,1), (0,2), …, (1,2), …."""
    return [(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)]


def pair_classes(n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, second): the classes of every pair, in LIBSVM's order."""
    return np.triu_indices(n_classes, 1)


def assemble_pairs(rows, coef, pair, y_enc, n_classes):
    """(support, n_support, dual_coef) in LIBSVM's one-vs-one layout from the pairs' solutions:
    `rows[i]` a training row of pair `pair[i]` and `coef[i]` its y α there (0 for a non-SV),
    over every pair's rows. For pair (a, b) the coefficients of class a's support vectors sit
    in row b − 1 of dual_coef and those of class b's in row a."""
    first, second = pair_classes(n_classes)
    sv = coef != 0
    rows, coef, pair = rows[sv], coef[sv], pair[sv]
    is_sv = np.zeros(y_enc.shape[0], dtype=bool)
    is_sv[rows] = True
    support = np.flatnonzero(is_sv)
    support = support[np.argsort(y_enc[support], kind="stable")]
    n_support = np.bincount(y_enc[support], minlength=n_classes).astype(np.int32)
    col = np.full(y_enc.shape[0], -1, dtype=np.int64)
    col[support] = np.arange(support.size)
    dual_coef = np.zeros((max(n_classes - 1, 1), support.size))
    a, b = first[pair], second[pair]
    dual_coef[np.where(y_enc[rows] == a, b - 1, a), col[rows]] = coef
    return support, n_support, dual_coef


@dataclass
class ProblemFit:
    """One solved dual read back per training row: `rows` the training rows its variables
    belong to, `coef` Σ y α over each row's variables, `free` the rows with a free variable and
    none at its bound, `bounded` the rows with a variable at its bound, `rho` and `objective`
    on the model's scale; `result` is the solver's own (α, gradient, …) and `p` the problem's
    linear term, from which a later fit can start; `at_upper` marks the variables at their
    upper bound; `var_rows` the training row of each variable and `y` its label."""

    rows: np.ndarray
    coef: np.ndarray
    free: np.ndarray
    bounded: np.ndarray
    rho: float
    objective: float
    result: DualResult
    p: np.ndarray
    at_upper: np.ndarray
    var_rows: np.ndarray
    y: np.ndarray

    def point(self) -> tuple[np.ndarray, np.ndarray]:
        """The solver's α and Qα = G − p."""
        return self.result.alpha, self.result.grad - self.p


def read_back(var_rows: np.ndarray, problem: DualProblem, res: DualResult, scale: float = 1.0) -> ProblemFit:
    """A ProblemFit from the solver's result; `var_rows`: the training row of each variable,
    `scale`: the factor from the solver's α to the model's (ν-SVC: 1/r)."""
    present = np.bincount(var_rows) > 0
    rows = np.flatnonzero(present)
    inv = (np.cumsum(present) - 1)[var_rows]
    coef = scale * np.bincount(inv, weights=problem.y * res.alpha, minlength=rows.size)
    moved = np.bincount(inv, weights=res.alpha > 0, minlength=rows.size) > 0
    bounded = np.bincount(inv, weights=res.alpha >= problem.upper, minlength=rows.size) > 0
    return ProblemFit(rows, coef, rows[moved & ~bounded], rows[bounded], scale * res.rho,
                      scale**2 * res.objective, res, problem.p, res.alpha >= problem.upper, var_rows,
                      problem.y)


@dataclass
class FitsSummary:
    """What the fitted state keeps of a fit's problems: per problem ρ and the objective (the
    model's scale), the pair updates and whether all converged; the rows with a free variable
    and those with a variable at its bound (repeats allowed); and every problem's rows with
    their Σ y α (`rows`, `coef`) and problem (`owner`)."""

    rho: np.ndarray
    objective: np.ndarray
    n_iter: np.ndarray
    converged: bool
    free: np.ndarray
    bounded: np.ndarray
    rows: np.ndarray
    coef: np.ndarray
    owner: np.ndarray

    @classmethod
    def of(cls, fits) -> "FitsSummary":
        """The summary of a list of ProblemFit, or a BatchFits'."""
        if isinstance(fits, BatchFits):
            return fits.summary()
        sizes = [f.rows.size for f in fits]
        return cls(np.array([f.rho for f in fits]), np.array([f.objective for f in fits]),
                   np.array([f.result.n_iter for f in fits], dtype=np.int32), all(f.result.converged for f in fits),
                   np.concatenate([f.free for f in fits]), np.concatenate([f.bounded for f in fits]),
                   np.concatenate([f.rows for f in fits]), np.concatenate([f.coef for f in fits]),
                   np.repeat(np.arange(len(fits)), sizes))


class BatchFits(Sequence):
    """The problems of one fit solved in one call (`solvers.smo.solver`), each variable one
    training row (`var_rows`; no row twice in a problem), kept as arrays: fits[k] is problem
    k's ProblemFit, made when asked as the per-problem path makes it (`read_back`); `scale`:
    per problem, the factor from the solver's α to the model's."""

    def __init__(self, var_rows: np.ndarray, batch: DualBatch, result: BatchResult, scale: np.ndarray):
        self.var_rows, self.batch, self.result, self.scale = var_rows, batch, result, scale

    def __len__(self) -> int:
        return self.batch.sizes.size

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        lo, hi = self.batch.offsets[k], self.batch.offsets[k + 1]
        p, res = self.batch.problems, self.result
        problem = DualProblem(p.p[lo:hi], p.y[lo:hi], p.upper[lo:hi], p.kidx[lo:hi], p.nu_mode)
        one = DualResult(res.alpha[lo:hi].copy(), res.grad[lo:hi].copy(), float(res.rho[k]), float(res.objective[k]),
                         int(res.n_iter[k]), float(res.r[k]), bool(res.converged[k]))
        return read_back(self.var_rows[lo:hi], problem, one, float(self.scale[k]))

    def summary(self) -> FitsSummary:
        p, res = self.batch.problems, self.result
        owner = self.batch.owner()
        moved, bounded = res.alpha > 0, res.alpha >= p.upper
        return FitsSummary(self.scale * res.rho, self.scale**2 * res.objective, res.n_iter.astype(np.int32),
                           bool(res.converged.all()), self.var_rows[moved & ~bounded], self.var_rows[bounded],
                           self.var_rows, self.scale[owner] * p.y * res.alpha, owner)


class Formulation:
    """A model's duals: its targets from the data, each dual posed over training rows (the
    `kidx` of a posed problem are training row numbers), the factor from the solver's α to the
    model's, and the fitted attributes read back from the solutions. `est`: the estimator,
    whose parameters it reads; `fitted`: the attributes its targets set (`classes_`, …)."""

    #: The parameters that scale every problem's box (C) or its sum constraint (ν): a solution
    #: times the ratio of their new values to the old is feasible for the new ones.
    scaled: tuple[str, ...] = ("C",)
    #: One problem per class pair, whose objective and iterations are kept per pair.
    one_vs_one = False
    #: The calibration `probability=True` fits (a name of `models.smo.calibration.CALIBRATIONS`;
    #: None: the model has none).
    calibration: str | None = None
    #: Whether the calibration needs nothing of the full fit, so that both may run at once.
    calibrates_alone = True

    def __init__(self, est, fitted=None):
        self.est, self.fitted = est, fitted or {}

    def targets(self, X, y, sample_weight) -> Targets:
        raise NotImplementedError

    def problems(self, rows, row_index, target, weight) -> list[tuple[np.ndarray, Posed]]:
        """Every dual of the fit on the training rows with `target` and `weight`, each with the
        training row of each of its variables; `rows` (training row i at row_index[i]) serves
        the hard-constraint checks of C = inf."""
        raise NotImplementedError

    def batch(self, row_index, target, weight) -> tuple[np.ndarray, DualBatch] | None:
        """The duals of `problems` as one batch for `solvers.smo.solver`, with each variable's
        training row; None where they cannot be posed so (`problems` then raises what it raises)."""
        return None

    def scale(self, k: int, res: DualResult) -> float:
        """The factor from problem k's α to the model's."""
        return 1.0

    def batch_scale(self, res: BatchResult) -> np.ndarray | None:
        """`scale` of every problem of a batch; None where `scale` would raise."""
        return np.ones(res.rho.size)

    def unbounded(self, k: int) -> Exception | None:
        """The error of an unbounded dual k, which only an infinite bound allows."""
        return None

    def summary(self, k: int, res: DualResult) -> tuple[str, ...]:
        """The lines LIBSVM prints for problem k beside its iterations, objective and ρ."""
        return ()

    def assemble(self, target, summary: FitsSummary, n_rows: int):
        """(support, n_support, dual_coef): the rows of nonzero coefficient, in one problem."""
        nz = summary.coef != 0
        support = summary.rows[nz]
        return support, np.array([support.size], dtype=np.int32), summary.coef[nz][None, :]

    def read_back(self, fits, state: dict) -> dict:
        """The model's own fitted attributes beside the common ones of `state`."""
        return {}


class OneVsOne(Formulation):
    """One dual per class pair (a, b) on the pair's rows of positive weight, a's with y = +1
    (LIBSVM's one-vs-one; Knerr, Personnaz & Dreyfus 1990)."""

    one_vs_one = True
    calibration = "pairs"

    def targets(self, X, y, sample_weight) -> Targets:
        """X validated, y encoded as class numbers, and each row's weight (sample × class)."""
        X, y = validate_Xy(self.est, X, y)
        classes, y_enc = encode_classes(y, type(self.est).__name__)
        sw = validate_sample_weight(sample_weight, X)
        class_weight = class_weights(self.est.class_weight, classes, y_enc)
        return Targets(X, y_enc, self.row_weights(sw, class_weight, y_enc),
                       {"classes_": classes, "class_weight_": class_weight})

    def row_weights(self, sample_weight, class_weight, y_enc):
        """Each row's weight in the dual (C-SVC: the factor of C_i): sample × class weight."""
        return sample_weight * class_weight[y_enc]

    def pair_classes(self, k) -> list[int]:
        """The classes (a, b) of pair k."""
        first, second = pair_classes(self.fitted["classes_"].shape[0])
        return [int(first[k]), int(second[k])]

    def pair_label(self, k) -> str:
        """The labels of pair k, as the errors name it."""
        a, b = self.fitted["classes_"][self.pair_classes(k)].tolist()
        return f"({a!r}, {b!r})"

    def pair_rows(self, y_enc, weight, a, b):
        """The rows of positive weight of class pair (a, b), a's first, and their ±1 labels."""
        classes = self.fitted["classes_"]
        idx = np.concatenate([np.flatnonzero((y_enc == c) & (weight > 0)) for c in (a, b)])
        ypair = np.where(y_enc[idx] == a, 1.0, -1.0)
        if not (ypair > 0).any() or not (ypair < 0).any():
            empty = classes[a] if not (ypair > 0).any() else classes[b]
            raise ValueError(f"class {empty.item()!r} has no sample of positive weight (class_weight × "
                             f"sample_weight), so the pair of classes ({classes[a].item()!r}, "
                             f"{classes[b].item()!r}) cannot be fitted")
        return idx, ypair

    def layout(self, y_enc, weight):
        """Every class pair's rows of positive weight, a's first (as `pair_rows` gives them),
        concatenated: (rows, their ±1 labels, each pair's offsets); None when a class has no
        such row (`pair_rows` raises for its pairs)."""
        n_classes = self.fitted["classes_"].shape[0]
        kept = np.flatnonzero(weight > 0)
        order = kept[np.argsort(y_enc[kept], kind="stable")]
        count = np.bincount(y_enc[kept], minlength=n_classes)
        if not count.all():
            return None
        start = np.r_[0, np.cumsum(count)[:-1]]
        first, second = pair_classes(n_classes)
        lengths = np.stack([count[first], count[second]], axis=1).ravel()
        idx = order[ragged_ranges(np.stack([start[first], start[second]], axis=1).ravel(), lengths)]
        ypair = np.repeat(np.tile([1.0, -1.0], first.size), lengths)
        return idx, ypair, np.r_[0, np.cumsum(count[first] + count[second])]

    def problems(self, rows, row_index, target, weight):
        out = []
        for k, (a, b) in enumerate(class_pairs(self.fitted["classes_"].shape[0])):
            idx, ypair = self.pair_rows(target, weight, a, b)
            out.append((idx, self.pair(rows, row_index[idx], ypair, weight[idx], k)))
        return out

    def pair(self, rows, kidx, ypair, weight, k) -> Posed:
        """The dual of class pair k on the rows `kidx` of `rows` with labels `ypair`."""
        raise NotImplementedError

    def batch(self, row_index, target, weight):
        layout = self.layout(target, weight)
        if layout is None:
            return None
        idx, ypair, offsets = layout
        batch = self.pair_batch(ypair, weight[idx], row_index[idx], offsets)
        return None if batch is None else (idx, batch)

    def pair_batch(self, ypair, weight, kidx, offsets) -> DualBatch | None:
        """The pairs' duals (rows `kidx`, pair k from offsets[k]) as one batch, as `pair` poses
        each; None where `pair` would raise."""
        raise NotImplementedError

    def assemble(self, target, summary, n_rows):
        return assemble_pairs(summary.rows, summary.coef, summary.owner, target, self.fitted["classes_"].shape[0])


class CSVC(OneVsOne):
    """C-SVC (Cortes & Vapnik 1995; Chang & Lin 2011, §2.1) of each pair: U_i = C_i; C = inf is
    the hard margin (Boser, Guyon & Vapnik 1992), refused where the pair is not separable."""

    def pair(self, rows, kidx, ypair, weight, k):
        C = self.est.C
        if np.isinf(C) and kidx.size <= LP_MAX_ROWS and not is_separable(rows.exact_block(kidx), ypair):
            raise self.unbounded(k)
        problem, _ = c_svc(ypair, C * weight, kidx)
        return Posed(problem)

    def pair_batch(self, ypair, weight, kidx, offsets):
        if np.isinf(self.est.C):
            return None  # each pair's separability is tested first
        problem, _ = c_svc(ypair, self.est.C * weight, kidx)
        return DualBatch(problem, offsets)

    def unbounded(self, k):
        return NotSeparableError(f"the classes {self.pair_label(k)} are not separable with "
                                 f"kernel={self.est.kernel!r}: the hard-margin problem (C=inf) has no solution; "
                                 "use a finite C")

    def summary(self, k, res):
        """LIBSVM prints ν = Σα / (C l) when both classes of the pair have the same C."""
        C = self.est.C
        cw = self.fitted["class_weight_"][self.pair_classes(k)]
        if cw[0] != cw[1] or np.isinf(C):
            return ()
        return (f"nu = {res.alpha.sum() / (C * cw[0] * res.alpha.size):f}",)


class NuSVCPairs(OneVsOne):
    """ν-SVC (Schölkopf et al. 2000) of each pair in LIBSVM's form; α and ρ divided by r give the
    C-SVC solution for C = 1/r. Class weights scale C, which ν-SVC has none of: ignored, as
    LIBSVM and scikit-learn do."""

    scaled = ("nu",)

    def row_weights(self, sample_weight, class_weight, y_enc):
        if self.est.class_weight is not None:
            warn("NuSVC ignores class_weight, as scikit-learn's NuSVC and LIBSVM's svm-train -s 1 do (class "
                 "weights scale C, which nu-SVC has none of); for a weighted nu-SVC pass "
                 "sample_weight=sklearn.utils.class_weight.compute_sample_weight(class_weight, y)",
                 UserWarning)
        return sample_weight

    def pair(self, rows, kidx, ypair, weight, k):
        nu = self.est.nu
        w_pos, w_neg = weight[ypair > 0].sum(), weight[ypair < 0].sum()
        if nu * (w_pos + w_neg) / 2 > min(w_pos, w_neg):
            raise ValueError(f"specified nu is infeasible for the class pair {self.pair_label(k)}: "
                             f"nu={nu} needs nu*(n_a+n_b)/2 <= min(n_a, n_b), with (weighted) "
                             f"counts n_a={w_pos:g}, n_b={w_neg:g}")
        problem, alpha0 = nu_svc(ypair, weight, nu, kidx)
        return Posed(problem, alpha0)

    def pair_batch(self, ypair, weight, kidx, offsets):
        nu = self.est.nu
        owner = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        w_pos = np.bincount(owner, weights=np.where(ypair > 0, weight, 0.0), minlength=offsets.size - 1)
        w_neg = np.bincount(owner, weights=np.where(ypair < 0, weight, 0.0), minlength=offsets.size - 1)
        if np.any(nu * (w_pos + w_neg) / 2 > np.minimum(w_pos, w_neg)):
            return None  # `pair` names the infeasible pair
        posed = nu_svc_batch(ypair, weight, nu, kidx, owner)
        return None if posed is None else DualBatch(posed[0], offsets, posed[1])

    def scale(self, k, res):
        if res.r == 0:  # LIBSVM divides by r regardless (a negative r too, as here)
            raise ValueError(f"nu-SVC's margin r is {res.r:g} for the class pair {self.pair_label(k)}: the "
                             "kernel does not tell the classes apart (e.g. it is constant on their rows)")
        if abs(res.r) < _SMALLEST_R:
            raise ValueError(f"nu={self.est.nu!r} is too small for the class pair {self.pair_label(k)}: nu-SVC's "
                             f"margin r = {res.r:g} makes its C = 1/r and objective (1/r²) overflow float64; use a "
                             "larger nu")
        return 1 / res.r

    def batch_scale(self, res):
        return None if np.any(np.abs(res.r) < _SMALLEST_R) else 1 / res.r  # `scale` names the pair

    def summary(self, k, res):
        return (f"C = {1 / res.r:f}",)


class Tube(Formulation):
    """One dual over (α, α*), the 2N variables of the rows of positive weight; the regression
    function f(x) = Σ (α_i − α*_i) K(x_i, x) + b."""

    calibration = "tube"

    def targets(self, X, y, sample_weight):
        X, y = validate_Xy(self.est, X, y, y_numeric=True)
        return Targets(X, np.asarray(y, dtype=np.float64), validate_sample_weight(sample_weight, X))

    def problems(self, rows, row_index, target, weight):
        keep = positive_rows(weight)
        problem, alpha0 = self.dual(target[keep], self.est.C * weight[keep], row_index[keep])
        return [(np.tile(keep, 2), Posed(problem, alpha0))]

    def dual(self, target, upper, kidx):
        """(problem, α⁰) over the kept rows, U_i their C_i."""
        raise NotImplementedError

    def read_back(self, fits, state):
        free, bounded = state["free_support_"], state["bounded_support_"]
        return {"inside_tube_": np.setdiff1d(fits[0].rows, np.concatenate([free, bounded])),
                "on_tube_": free, "outside_tube_": bounded}


class EpsilonSVR(Tube):
    """ε-SVR (Vapnik 1995; Chang & Lin 2011, §2.4); C = inf is the hard ε-tube, refused where no
    function of the kernel fits every target within ε."""

    def problems(self, rows, row_index, target, weight):
        keep = positive_rows(weight)
        if np.isinf(self.est.C) and keep.size <= LP_MAX_ROWS and \
                not fits_tube(rows.exact_block(row_index[keep]), target[keep], self.est.epsilon):
            raise self.unbounded(0)
        return super().problems(rows, row_index, target, weight)

    def dual(self, target, upper, kidx):
        return epsilon_svr(target, upper, self.est.epsilon, kidx)

    def unbounded(self, k):
        return TubeTooNarrowError(f"the epsilon-tube is too narrow: no function of kernel={self.est.kernel!r} fits "
                                  f"every target within epsilon={self.est.epsilon!r}, so the hard tube (C=inf) has "
                                  "no solution; widen epsilon or use a finite C")

    def summary(self, k, res):
        """LIBSVM prints ν = Σ|α − α*| / (C l)."""
        if np.isinf(self.est.C):
            return ()
        n = res.alpha.size // 2
        return (f"nu = {np.abs(res.alpha[:n] - res.alpha[n:]).sum() / (self.est.C * n):f}",)


class NuSVR(Tube):
    """ν-SVR (Schölkopf et al. 2000): the tube width ε comes out as −r (`epsilon_`)."""

    scaled = ("C", "nu")

    def dual(self, target, upper, kidx):
        return nu_svr(target, upper, self.est.nu, kidx)

    def summary(self, k, res):
        return (f"epsilon = {-res.r:f}",)

    def read_back(self, fits, state):
        return {**super().read_back(fits, state), "epsilon_": -fits[0].result.r}


class Quantile(Tube):
    """Kernel quantile regression at level τ (Takeuchi, Le, Sears & Smola 2006); LIBSVM's noise
    model is ε-SVR's, so it has no calibration."""

    calibration = None

    def dual(self, target, upper, kidx):
        return quantile(target, upper, self.est.quantile, kidx)


class OneClass(Formulation):
    """One-class SVM (Schölkopf et al. 2001) over the rows of positive weight; ρ is kept as
    `offset_`. Its density marks are the full fit's decision values."""

    scaled = ("nu",)
    calibration = "density"
    calibrates_alone = False

    def targets(self, X, y, sample_weight):
        X = validate_X(self.est, X)
        return Targets(X, None, validate_sample_weight(sample_weight, X))

    def problems(self, rows, row_index, target, weight):
        keep = positive_rows(weight)
        problem, alpha0 = one_class(weight[keep], self.est.nu, row_index[keep])
        return [(keep, Posed(problem, alpha0))]

    def read_back(self, fits, state):
        return {"offset_": -state["_intercept_"][:1]}


@dataclass
class DualSolver:
    """How one fit solves its posed duals: on `backend`, with the training `kernel`'s `rows`, to
    the `settings`; `side_by_side`: problems may be solved at once (none of their summaries is
    printed); `verbose`: print LIBSVM's summary of each."""

    backend: object
    kernel: object
    rows: object
    settings: Settings
    side_by_side: bool
    verbose: object

    def solve(self, form: Formulation, posed: list) -> list[ProblemFit]:
        """Every (variable rows, Posed) of `form` solved and read back, in turn or side by side
        (`backend.solve_each`); the model's own errors for an unbounded or overflowing dual."""
        try:
            results = self.backend.solve_each(self.rows, [p for _, p in posed], self.settings, self.side_by_side)
        except UnboundedDualError as err:
            raise (form.unbounded(err.problem or 0) or err) from None
        fits = []
        for k, ((var_rows, p), res) in enumerate(zip(posed, results)):
            if not (np.isfinite(res.alpha).all() and np.isfinite(res.rho)):
                raise ValueError(f"{NOT_FINITE}: {overflow_cause(self.kernel, getattr(form.est, 'C', None), self.rows)}")
            fit = read_back(var_rows, p.problem, res, form.scale(k, res))
            if self.verbose:
                print_summary(fit, form.summary(k, res))
            fits.append(fit)
        return fits

    def solve_batch(self, form: Formulation, batch: DualBatch | None) -> tuple[BatchResult, np.ndarray] | None:
        """The duals of `batch` (`form`'s) solved in one call (`solvers.smo.solver`): (result,
        each one's factor from its α to the model's); None where they cannot be (the
        per-problem path then solves them, and raises what it raises)."""
        if batch is None or "smo-batch" not in self.backend.solvers:
            return None
        if not batchable(batch.sizes, np.unique(batch.problems.kidx).size, self.rows):
            return None
        res = solve_batch(batch, self.rows, self.settings.tol, self.settings.max_iter, self.settings.shrinking)
        scale = form.batch_scale(res)
        if scale is None or not (np.isfinite(res.alpha).all() and np.isfinite(res.rho).all()):
            return None
        return res, scale


def print_summary(fit: ProblemFit, extra=()):
    """LIBSVM's summary of one solved problem."""
    print(f"optimization finished, #iter = {fit.result.n_iter}")
    for line in extra:
        print(line)
    print(f"obj = {fit.objective:f}, rho = {fit.rho:f}")
    print(f"nSV = {int(np.count_nonzero(fit.coef))}, nBSV = {fit.bounded.size}")


#: The largest value a kernel row (float32) holds.
_ROW_MAX = float(np.finfo(np.float32).max)


def overflow_cause(kernel, C, rows) -> str:
    """Why a solution overflowed, naming the parameter to change: kernel values beyond the
    float32 of the kernel rows, else the box bound C (or the targets) times them."""
    top = float(np.max(np.abs(rows.diag), initial=0.0))
    if not top <= _ROW_MAX:
        return (f"the {kernel.name!r} kernel's values reach {top:.3g}, beyond the {_ROW_MAX:.3g} of the "
                f"float32 kernel rows; they are set by {kernel.values_set_by()}: lower them or scale the data "
                "(e.g. with MinMaxScaler)")
    bound = "" if C is None or np.isinf(C) else f"C={C!r} (with its class weights) times "
    return (f"{bound}the kernel values (up to {top:.3g}) overflow float64; lower "
            f"{'C' if bound else 'the kernel values'} or scale the data and the targets")
