"""The base of the SMO-type models (SVC, ν-SVC, SVR, ν-SVR, one-class): the one fit path —
validate and prepare, solve the model's dual problems on a row source with optional warm
starts, store the fitted state — on the kernel-expansion base."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import update_wrapper
from types import MethodType

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from svmkit._arrays import data_fingerprint
from svmkit._threads import one_blas_thread
from svmkit._validation import check_bool, check_max_iter, check_seed, check_verbose, real
from svmkit.exceptions import warn
from svmkit.kernels.kinds import NOT_FINITE
from svmkit.kernels.spec import KernelSpec
from svmkit.models.expansion import KernelExpansion
from svmkit.models.session import FitSession
from svmkit.parallel.tasks import beside, run_tasks
from svmkit.solvers.row_source import RowSource
from svmkit.solvers.smo import DualProblem, DualResult, gap_observer, solve, solved_whole
from svmkit.solvers.smo_batch import BatchResult, DualBatch
from svmkit.solvers.starts import best_start

#: Largest problem whose hard-constraint feasibility (C = inf) is checked by linear programming.
LP_MAX_ROWS = 3000
#: Folds of the internal cross-validation that calibrates probabilities (LIBSVM's 5).
PROBABILITY_FOLDS = 5


class _AvailableIf:
    """scikit-learn's `available_if` descriptor, whose AttributeError also gives the check's
    reason: scikit-learn's says only "This 'SVC' has no attribute 'predict_proba'", leaving the
    fix (probability=True) in the chained exception."""

    def __init__(self, fn, check):
        self.fn, self.check = fn, check
        update_wrapper(self, fn)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        try:
            self.check(obj)
        except AttributeError as exc:
            raise AttributeError(f"This {type(obj).__name__!r} has no attribute {self.fn.__name__!r}: {exc}") from None
        return MethodType(self.fn, obj)


def available_if(check):
    """A method that exists only where `check(self)` raises no AttributeError (hasattr is False
    otherwise), whose error message gives the check's."""
    return lambda fn: _AvailableIf(fn, check)


@dataclass
class Start:
    """Points to start one dual from, each (α, Qα) or (α, Qα, lift) (`lift`: the variables to
    move to their upper bound) with yᵀα (ν: each class's sum) as the dual asks but possibly
    outside its box: the solve starts from the one of lowest objective once clipped into the
    box (`solvers.starts.best_start`)."""

    points: list[tuple]


@dataclass
class ProblemFit:
    """One solved dual read back per training row: `rows` the training rows its variables
    belong to, `coef` Σ y α over each row's variables, `free` the rows with a free variable and
    none at its bound, `bounded` the rows with a variable at its bound, `rho` and `objective`
    on the model's scale; `result` is the solver's own (α, gradient, …) and `p` the problem's
    linear term, from which a later fit can start; `at_upper` marks the variables at their
    upper bound."""

    rows: np.ndarray
    coef: np.ndarray
    free: np.ndarray
    bounded: np.ndarray
    rho: float
    objective: float
    result: DualResult
    p: np.ndarray
    at_upper: np.ndarray

    def point(self) -> tuple[np.ndarray, np.ndarray]:
        """The solver's α and Qα = G − p."""
        return self.result.alpha, self.result.grad - self.p


#: The largest value a kernel row (float32) holds.
_ROW_MAX = float(np.finfo(np.float32).max)


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
                      scale**2 * res.objective, res, problem.p, res.alpha >= problem.upper)


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
    """The problems of one fit solved in one call (`solvers.smo_batch`), each variable one
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


def probability_folds(n: int, seed: int) -> np.ndarray:
    """The fold (0 … PROBABILITY_FOLDS − 1) of each of n rows, as LIBSVM deals them: the rows
    shuffled by `seed`, then cut into PROBABILITY_FOLDS runs of ⌊i·n/5⌋ boundaries."""
    fold = np.empty(n, dtype=np.int64)
    fold[np.random.default_rng(seed).permutation(n)] = np.arange(n) * PROBABILITY_FOLDS // max(n, 1)
    return fold


def may_share_threads(rows: RowSource, verbose=False) -> bool:
    """Whether solves on `rows` may run on several threads at once: the rows can be fetched
    concurrently and no summary is printed (lines from several solves would interleave)."""
    return bool(getattr(rows, "concurrent", False)) and not verbose and (os.cpu_count() or 1) > 1


def each_task(rows: RowSource, work, tasks, verbose=False) -> list:
    """[work(t) for t in tasks], on threads when `may_share_threads` (the compiled loops
    release the GIL), else in turn."""
    return run_tasks(work, [(t,) for t in tasks], n_jobs=None if may_share_threads(rows, verbose) else 1,
                     limit_threads=True)


def positive_rows(sample_weight: np.ndarray, name="sample_weight") -> np.ndarray:
    """The rows of positive weight, which the dual keeps (as scikit-learn's LIBSVM does);
    `name` says what the weights are made of."""
    keep = np.flatnonzero(sample_weight > 0)
    if keep.size == 0:
        raise ValueError(f"{name} is zero for every sample; at least one must be positive")
    return keep


class SMOModel(KernelExpansion):
    """Base of the SMO-type estimators; subclasses give their targets (`_targets`) and solve
    their dual problems (`_solve_problems`)."""

    #: One problem per class pair, whose objective and iterations are kept per pair.
    _one_vs_one = False
    #: The parameters that scale every problem's box (C) or its sum constraint (ν): a solution
    #: times the ratio of their new values to the old is feasible for the new ones.
    _scaled_params: tuple[str, ...] = ()

    #: Whether `_calibrate` needs nothing of the full fit, so that both may run at once.
    _calibrates_alone = True

    #: The expansion's checks and the solver's.
    _constraints = {**KernelExpansion._constraints, "tol": real(low=0), "cache_size": real(low=0),
                    "max_iter": check_max_iter, "shrinking": check_bool, "warm_start": check_bool,
                    "probability": check_bool, "verbose": check_verbose,
                    "random_state": check_seed}

    def _solve_session(self, session: FitSession, starts):
        """Solve the model's dual problems on the session's rows (default: a row source of the
        training kernel on the session's backend) and store the fitted state. `starts`: per
        problem, None or a `Start`, in the layout of `_problem_fits` of an earlier fit (with
        `warm_start`, a refit on the same data and kernel starts from the last fit)."""
        # every BLAS call of the fit on one thread, whichever thread fits: the starts, the
        # separability test and the calibration read kernel rows as the solver does
        with one_blas_thread():
            self._solve_on_rows(session, starts)

    def _solve_on_rows(self, session: FitSession, starts):
        X, target, weight = session.X, session.target, session.weight
        rows = session.rows
        if rows is None:
            rows = session.backend.training_rows(session.kernel, session.Xk, self.cache_size, per_problem=True)
        row_index = session.index()
        warm_key = None
        if self.warm_start:
            warm_key = (data_fingerprint(X, target if target is not None else np.zeros(0), weight),
                        self.kernel, self.gamma_, self.degree, self.coef0)
            if starts is None and getattr(self, "_warm_key", None) == warm_key:
                starts = self._starts_from(self)
        if self._calibrates_alone and getattr(self, "probability", False) and may_share_threads(rows, self.verbose):
            # the calibration folds need nothing of the full fit: both share the cores; the full
            # fit runs here, so that its own errors come first and progress is reported
            self._fetch_fold_rows(rows, row_index)
            with beside(self._calibrate, X, rows, row_index, target, weight):
                fits = self._solve_problems(rows, row_index, target, weight, starts)
            self._set_fitted(session, target, fits)
        else:
            fits = self._solve_problems(rows, row_index, target, weight, starts)
            self._set_fitted(session, target, fits)
            self._calibrate(X, rows, row_index, target, weight)
        self._warm_key = warm_key
        self._warm_params = {p: getattr(self, p) for p in self._scaled_params}

    @staticmethod
    def _fetch_fold_rows(rows: RowSource, row_index):
        """Compute every training row at once, on every core, when the calibration folds'
        duals are solved whole: each then fetches all its rows first, and together they need
        every one, which the first fold would otherwise compute alone while the other tasks
        wait on the row source."""
        every = np.unique(row_index)
        n_fold = every.size - every.size // PROBABILITY_FOLDS
        if solved_whole(n_fold, n_fold, rows.capacity):
            rows.fetch(every)

    def _calibrate(self, X, rows, row_index, target, weight):
        """Fit what `probability=True` asks for on the training kernel `rows` (the models with
        probabilities override this)."""

    def _check_proba(self):
        """predict_proba exists only with probability=True."""
        if not self.probability:
            name = type(self).__name__
            raise AttributeError(f"probabilities need probability=True at fit, e.g. {name}(probability=True)"
                                 ".fit(X, y); this model has probability=False")
        return True

    def _probability_seed(self, X, labels) -> int:
        """The seed of the calibration folds: from `random_state` when it is given, else from
        the data, so that two fits on the same data agree."""
        if getattr(self, "random_state", None) is not None:
            return int(check_random_state(self.random_state).randint(2**31 - 1))
        return int(data_fingerprint(X, labels)[:15], 16)

    def _starts_from(self, previous, earlier=None) -> list[Start] | None:
        """Starts for this model's problems from the fitted model `previous`, solved on the same
        data and kernel, v being the product of the box and sum parameters (C, ν):
        every α times v/v₁ (which keeps the equality constraints and scales Qα exactly); when
        fewer variables are at their upper bound than free, α₁ with those lifted to the new
        bound (the solution itself when the free α do not depend on the bounded ones, as on
        nearly diagonal kernels; `best_start` takes it only where the equalities do not scale
        with v); and, with `earlier` (the fit before `previous` on a path of v), the line
        through the two solutions taken on to v, α₁ + (v − v₁)/(v₁ − v₀)·(α₁ − α₀): the
        solution itself while the free and bounded variables stay the same, along which α is
        affine in v.
        None when v/v₁ is not finite and positive."""
        def product(values):
            return float(np.prod([values[p] for p in self._scaled_params]))

        fits, v1 = previous._problem_fits, product(previous._warm_params)
        v = product({p: getattr(self, p) for p in self._scaled_params})
        scale = v / v1
        if not (np.isfinite(scale) and scale > 0):
            return None
        starts = []
        for f in fits:
            alpha, q_alpha = f.point()
            points = [(scale * alpha, scale * q_alpha)]
            # a kernel row is read for each variable lifted: offered when they are the fewer
            if 2 * np.count_nonzero(f.at_upper) < np.count_nonzero(alpha > 0):
                points.append((alpha, q_alpha, f.at_upper))
            starts.append(Start(points))
        if earlier is not None:
            t = (v - v1) / (v1 - product(earlier._warm_params))
            if np.isfinite(t):
                for start, f1, f0 in zip(starts, fits, earlier._problem_fits):
                    (a1, q1), (a0, q0) = f1.point(), f0.point()
                    if a0.shape == a1.shape:
                        start.points.append((a1 + t * (a1 - a0), q1 + t * (q1 - q0)))
        return starts

    def _solve(self, problem: DualProblem, rows, alpha0=None, start: Start | None = None):
        """Solve one dual from the best point of `start` made feasible for `problem`, else (no
        start, or none of its points fits) from the model's own feasible `alpha0`."""
        grad0 = None
        picked = None if start is None else best_start(problem, rows, start.points)
        if picked is not None:
            alpha0, grad0 = picked
        res = solve(problem, rows, alpha0=alpha0, grad0=grad0, tol=self.tol, max_iter=self.max_iter,
                    shrinking=self.shrinking)
        if not (np.isfinite(res.alpha).all() and np.isfinite(res.rho)):
            raise ValueError(f"{NOT_FINITE}: {self._overflow_cause(rows)}")
        return res

    def _overflow_cause(self, rows) -> str:
        """Why a solution overflowed, naming the parameter to change: kernel values beyond the
        float32 of the kernel rows, else the box bound C (or the targets) times them."""
        kernel = KernelSpec("callable", func=self.kernel) if callable(self.kernel) else \
            KernelSpec(self.kernel, self.gamma_, self.degree, self.coef0)
        top = float(np.max(np.abs(rows.diag), initial=0.0))
        if not top <= _ROW_MAX:
            return (f"the {kernel.name!r} kernel's values reach {top:.3g}, beyond the {_ROW_MAX:.3g} of the "
                    f"float32 kernel rows; they are set by {kernel.values_set_by()}: lower them or scale the data "
                    "(e.g. with MinMaxScaler)")
        C = getattr(self, "C", None)
        bound = "" if C is None or np.isinf(C) else f"C={C!r} (with its class weights) times "
        return (f"{bound}the kernel values (up to {top:.3g}) overflow float64; lower "
                f"{'C' if bound else 'the kernel values'} or scale the data and the targets")

    def _side_by_side(self) -> bool:
        """Whether this fit's problems may be solved at once, where the backend can: not when
        each one's summary or progress is reported, which would interleave."""
        return not self.verbose and gap_observer.get() is None

    def _summary(self, fit: ProblemFit, extra=()):
        """With `verbose`, LIBSVM's summary of one solved problem."""
        if not self.verbose:
            return
        print(f"optimization finished, #iter = {fit.result.n_iter}")
        for line in extra:
            print(line)
        print(f"obj = {fit.objective:f}, rho = {fit.rho:f}")
        print(f"nSV = {int(np.count_nonzero(fit.coef))}, nBSV = {fit.bounded.size}")

    def _assemble(self, target, summary: FitsSummary):
        """(support, n_support, dual_coef) of a one-problem model: the rows of nonzero coef."""
        nz = summary.coef != 0
        support = summary.rows[nz]
        return support, np.array([support.size], dtype=np.int32), summary.coef[nz][None, :]

    def _set_fitted(self, session: FitSession, target, fits):
        """Store the fitted state; the one place a fit's attributes are set."""
        X = session.X
        summary = FitsSummary.of(fits)
        support, self.n_support_, self._dual_coef_ = self._assemble(target, summary)
        self._store_support(session, support)
        self._intercept_ = -summary.rho
        self.objective_ = summary.objective
        self.n_iter_ = summary.n_iter
        if not self._one_vs_one:
            self.objective_, self.n_iter_ = float(self.objective_[0]), int(self.n_iter_[0])
        free = np.zeros(X.shape[0], dtype=bool)
        bounded = np.zeros(X.shape[0], dtype=bool)
        free[summary.free] = True
        bounded[summary.bounded] = True
        self.free_support_ = np.flatnonzero(free)
        self.bounded_support_ = np.flatnonzero(bounded & ~free)
        self.loo_bound_ = support.size / X.shape[0]
        self.fit_status_ = int(not summary.converged)
        if self.fit_status_:
            warn(f"Solver terminated early (max_iter={self.max_iter}).  Consider pre-processing your "  # sklearn's
                 "data with StandardScaler or MinMaxScaler.", ConvergenceWarning)
        self.shape_fit_ = X.shape
        self._problem_fits = fits
        self._prepare_prediction()
