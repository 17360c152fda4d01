"""The base of the SMO-type models (SVC, ν-SVC, SVR, ν-SVR, one-class, kernel quantile
regression) and their one fit, which reads top to bottom: validate the parameters and the
data, the model's targets (its formulation, `models.smo.formulations`), the training kernel's
rows, every dual problem solved, α and ρ assembled into the support and its coefficients, the
probabilities calibrated when asked (`models.smo.calibration`), the fitted state stored."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import update_wrapper
from types import MethodType

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from svmkit._arrays import data_fingerprint, in_layout_of
from svmkit._threads import one_blas_thread
from svmkit._validation import check_bool, check_max_iter, check_seed, check_verbose, real
from svmkit.exceptions import warn
from svmkit.kernels.kinds import kernel_kind
from svmkit.models.smo import calibration
from svmkit.models.expansion import FitSession, KernelExpansion, open_session
from svmkit.models.retained import appended, remaining, retained
from svmkit.models.smo.formulations import BatchFits, DualSolver, Formulation, FitsSummary
from svmkit.parallel.tasks import beside
from svmkit.solvers.smo.solver import _add_kernel_terms, gap_observer
from svmkit.solvers.smo.starts import Settings, _constraint_groups


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


#: Share of the training rows for which a fit that keeps its kernel rows leaves room in each:
#: an update adding at most as many points carries the rows over (`_own_rows`).
UPDATE_ROOM = 0.05


class SMOModel(KernelExpansion):
    """Base of the SMO-type estimators; each names its formulation (`_formulation`), which
    poses its duals and reads them back."""

    #: The model's duals (a `models.smo.formulations.Formulation`).
    _formulation: type[Formulation] = Formulation

    #: The expansion's checks and the solver's.
    _constraints = {**KernelExpansion._constraints, "tol": real(low=0), "cache_size": real(low=0),
                    "max_iter": check_max_iter, "shrinking": check_bool, "warm_start": check_bool,
                    "probability": check_bool, "verbose": check_verbose,
                    "random_state": check_seed, "keep_data": check_bool}

    def set_fitted_state(self, state: dict):
        """As `KernelExpansion.set_fitted_state`; a later warm start scales from the parameters
        the state was fitted with, this estimator's (a model file keeps both)."""
        super().set_fitted_state(state)
        self._warm_params = {p: getattr(self, p) for p in self._formulation.scaled}
        return self

    def _targets(self, X, y, sample_weight):
        """The formulation's targets of the data (`open_session` asks for them)."""
        return self._formulation(self).targets(X, y, sample_weight)

    def _fit_session(self, session: FitSession, starts=None, keep_rows=False):
        """Solve the model's duals on `session` (made for this model or one differing in C or ν
        only) and store the fitted state. `starts`: per problem, points to start from
        (`_starts_from`); with `warm_start`, a refit on the same data and kernel starts from
        the last fit. `keep_rows`: keep the fit's own kernel rows, with room for an update's
        points, for the next update to carry over (`_update_starts`)."""
        self.check_parameters()
        form = self._formulation(self, session.fitted)
        # every BLAS call of the fit on one thread, whichever thread fits: the starts, the
        # separability test and the calibration read kernel rows as the solver does
        with one_blas_thread():
            rows = session.rows
            if rows is None:
                rows = self._own_rows(session, starts, keep_rows)
            row_index = session.index()
            side_by_side = not self.verbose and gap_observer.get() is None
            solver = DualSolver(session.backend, session.kernel, rows, Settings(self.tol, self.max_iter, self.shrinking),
                                side_by_side, self.verbose)
            warm_key = self._warm_key(session) if self.warm_start else None
            if starts is None and warm_key is not None and getattr(self, "_warm_key_", None) == warm_key:
                starts = self._starts_from(self)
            calibrate = self._calibration(form, solver, session, row_index)
            if calibrate is not None and form.calibrates_alone and calibration.may_share_threads(rows, self.verbose):
                # the calibration folds need nothing of the full fit: both share the cores; the
                # full fit runs here, so that its own errors come first and progress is reported
                calibration.fetch_fold_rows(rows, row_index)
                with beside(calibrate, None) as calibrated:
                    fits = self._solve(form, solver, session, row_index, starts)
                state = self._assemble(form, session, fits)
                probabilities = calibrated()
            else:
                fits = self._solve(form, solver, session, row_index, starts)
                state = self._assemble(form, session, fits)
                probabilities = calibration.WITHOUT.get(form.calibration, {}) if calibrate is None else calibrate(state)
        self._store(session, fits, {**state, **probabilities}, warm_key, form)
        self._kept_rows = rows if keep_rows and session.rows is None and rows.carries_over else None
        return self

    def _own_rows(self, session, starts, keep):
        """The fit's own kernel rows: an update's, carried over from the fit before
        (`_update_starts`), else new ones, leaving room in each for the points of an update
        (`UPDATE_ROOM`, or the rows this update adds) when they are kept."""
        update = starts if isinstance(starts, _LaidOut) else _LaidOut([], False)
        if update.rows is not None:
            return update.rows
        # the next update is taken to add as many rows as this one, when that is more
        room = max(int(np.ceil(UPDATE_ROOM * session.X.shape[0])), update.added) if keep else 0
        return session.backend.training_rows(session.kernel, session.Xk, self.cache_size, per_problem=True, room=room)

    def __getstate__(self):
        """The state pickled: the kernel rows kept for an update (up to `cache_size` MB) are not."""
        state = super().__getstate__()
        state.pop("_kept_rows", None)
        return state

    def _solve(self, form: Formulation, solver: DualSolver, session, row_index, starts):
        """Every dual of the fit: all at once where the formulation batches them and the backend
        can (no starts, problems side by side), else each in turn."""
        target, weight = session.target, session.weight
        if starts is None and solver.side_by_side:
            batched = form.batch(row_index, target, weight)
            solved = solver.solve_batch(form, None if batched is None else batched[1])
            if solved is not None:
                return BatchFits(batched[0], batched[1], *solved)
        posed = form.problems(solver.rows, row_index, target, weight)
        if isinstance(starts, _LaidOut):  # an update's starts, laid out on the problems as posed
            starts = starts.on(posed, solver.rows)
        for (_, p), points in zip(posed, starts or ()):
            p.points = points
        return solver.solve(form, posed)

    def _assemble(self, form: Formulation, session, fits) -> dict:
        """The fitted attributes of the solved duals: the support and its coefficients, ρ, the
        objectives, pair updates, free and bounded rows, and the formulation's own."""
        n = session.X.shape[0]
        summary = FitsSummary.of(fits)
        support, n_support, dual_coef = form.assemble(session.target, summary, n)
        free = np.zeros(n, dtype=bool)
        bounded = np.zeros(n, dtype=bool)
        free[summary.free] = True
        bounded[summary.bounded] = True
        objective, n_iter = summary.objective, summary.n_iter
        if not form.one_vs_one:
            objective, n_iter = float(objective[0]), int(n_iter[0])
        state = {"support_": np.asarray(support, dtype=np.int32), "n_support_": n_support, "_dual_coef_": dual_coef,
                 "support_vectors_": session.kernel.support_vectors(session.X, np.asarray(support, dtype=np.int32)),
                 "_intercept_": -summary.rho, "objective_": objective, "n_iter_": n_iter,
                 "free_support_": np.flatnonzero(free), "bounded_support_": np.flatnonzero(bounded & ~free),
                 "loo_bound_": support.size / n, "fit_status_": int(not summary.converged), "shape_fit_": session.X.shape}
        return {**state, **form.read_back(fits, state)}

    def _calibration(self, form, solver, session, row_index):
        """The calibration `probability=True` asks for, as a function of the fitted state; None
        without it."""
        if not (getattr(self, "probability", False) and form.calibration):
            return None
        fit = calibration.CALIBRATIONS[form.calibration]
        seed = self._probability_seed(session.X, np.zeros(0) if session.target is None else session.target)
        return lambda state: fit(form, solver, row_index, session.target, session.weight, seed, state)

    def _store(self, session, fits, state, warm_key, form):
        """Replace the fitted state: every attribute of an earlier fit goes (its conformal
        calibration's too, whose names end in _ as theirs do)."""
        for name in [n for n in vars(self) if n.endswith("_") and not n.startswith("__")]:
            delattr(self, name)
        vars(self).update(session.fitted)
        vars(self).update(state)
        self._prepared = self._prediction_kernel()
        self._problem_fits = fits
        self._warm_key_ = warm_key
        self._warm_params = {p: getattr(self, p) for p in form.scaled}
        if self.fit_status_:
            warn(f"Solver terminated early (max_iter={self.max_iter}).  Consider pre-processing your "  # sklearn's
                 "data with StandardScaler or MinMaxScaler.", ConvergenceWarning)

    def _warm_key(self, session):
        """What a warm start needs unchanged: the data, targets, weights and kernel."""
        target = session.target if session.target is not None else np.zeros(0)
        return (data_fingerprint(session.X, target, session.weight), self.kernel, session.fitted["gamma_"],
                self.degree, self.coef0)

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

    def _starts_from(self, previous, earlier=None) -> list[list] | None:
        """Points to start this model's problems from (`solvers.smo.starts.Posed.points`), from the
        fitted model `previous`, solved on the same data and kernel, v being the product of the
        box and sum parameters (C, ν): every α times v/v₁ (which keeps the equality constraints
        and scales Qα exactly); when fewer variables are at their upper bound than free, α₁ with
        those lifted to the new bound (the solution itself when the free α do not depend on the
        bounded ones, as on nearly diagonal kernels; `best_start` takes it only where the
        equalities do not scale with v); and, with `earlier` (the fit before `previous` on a
        path of v), the line through the two solutions taken on to v,
        α₁ + (v − v₁)/(v₁ − v₀)·(α₁ − α₀): the solution itself while the free and bounded
        variables stay the same, along which α is affine in v.
        None when v/v₁ is not finite and positive."""
        def product(values):
            return float(np.prod([values[p] for p in self._formulation.scaled]))

        fits, v1 = previous._problem_fits, product(previous._warm_params)
        v = product({p: getattr(self, p) for p in self._formulation.scaled})
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
            starts.append(points)
        if earlier is not None:
            t = (v - v1) / (v1 - product(earlier._warm_params))
            if np.isfinite(t):
                for points, f1, f0 in zip(starts, fits, earlier._problem_fits):
                    (a1, q1), (a0, q0) = f1.point(), f0.point()
                    if a0.shape == a1.shape:
                        points.append((a1 + t * (a1 - a0), q1 + t * (q1 - q0)))
        return starts

    def fit(self, X, y=None, sample_weight=None):
        """Fit the model; with keep_data=True, keep the training rows for `partial_fit` and `forget`."""
        if not self.keep_data:
            return super().fit(X, y, sample_weight)
        return self._fit_rows(X, y, sample_weight, keep=True)

    def _fit_rows(self, X, y, sample_weight, keep, new_row=None):
        """Fit on the rows (X, y, sample_weight), keeping them when `keep`; with `new_row` (each
        earlier row's row in X, −1 when forgotten), warm-started from this fit (`_update_starts`)."""
        if keep:
            kernel_kind(self.kernel).check_updatable()
        session = open_session(self, X, y, sample_weight)
        starts = None if new_row is None else self._update_starts(new_row, session)
        self._fit_session(session, starts, keep_rows=keep)
        if keep:
            vars(self).update(retained(session.X, y, sample_weight))
        return self

    def _partial_fit(self, X, y, sample_weight):
        """`partial_fit`: the first call fits and keeps the rows; a later one refits on every row
        seen, warm-started from this fit's α, the new rows' variables at 0."""
        if not hasattr(self, "shape_fit_"):
            return self._fit_rows(X, y, sample_weight, keep=True)
        rows, targets, weight = appended(self, X, y, sample_weight)
        return self._fit_rows(rows, targets, weight, keep=True, new_row=np.arange(self.retained_X_.shape[0]))

    def forget(self, indices):
        """Remove the training rows at `indices` (positions in the order seen): the model becomes
        the fit on the remaining rows, warm-started from this fit's α with the forgotten rows'
        variables taken out and the equality constraints restored."""
        keep = remaining(self, indices)
        y = getattr(self, "retained_y_", None)
        kept = np.flatnonzero(keep)
        return self._fit_rows(self.retained_X_[kept], None if y is None else y[kept], self.retained_weight_[kept],
                              keep=True, new_row=np.where(keep, np.cumsum(keep) - 1, -1))

    def _update_starts(self, new_row, session):
        """The starts of an update on `session` (a function of the posed problems and the
        kernel's rows, for `_solve`): each problem's α from this fit laid out on the new
        problem's variables by training row (`new_row[i]`: earlier row i's row now, −1 when
        forgotten; the second variable of a row, α* of the tube models, matched to the second),
        new variables at 0; the equality constraints (yᵀα = 0, the ν models' sums) restored
        within the box (Cauwenberghs & Poggio, NIPS 2000: warm-started, the SMO reaches the same
        optimum). Where the kernel is the same, Qα is this fit's, the forgotten variables'
        terms taken out (`_without_forgotten`), and the kernel rows this fit kept carry over
        (`RowSource.updated`); else Qα is read from the kernel rows of the nonzero α. None (a
        cold fit) when the problems are not the same ones (the classes changed) or this fit's α
        are not kept (a loaded model)."""
        fits = getattr(self, "_problem_fits", None)
        classes = session.fitted.get("classes_")
        if fits is None or (classes is not None and not np.array_equal(classes, self.classes_)):
            return None
        # gamma='scale' resolves on the rows; the forgotten rows' kernel values are computed
        # from the data, which a precomputed kernel does not have
        same_kernel = session.fitted["gamma_"] == self.gamma_ and self.kernel != "precomputed"
        earlier = [_Earlier(_row_keys(new_row[f.var_rows]), *f.point(), f.y, f.var_rows) for f in fits]
        if not same_kernel:
            return _LaidOut(earlier, False)
        kept = vars(self).get("_kept_rows")
        if kept is None and (new_row < 0).any():
            # a fit that kept no rows (a loaded model): the forgotten rows' come from the data
            kept = session.backend.training_rows(session.kernel, in_layout_of(self.retained_X_, session.Xk),
                                                 self.cache_size)
        earlier = [_without_forgotten(e, kept) for e in earlier]
        earlier_row = np.full(session.X.shape[0], -1, dtype=np.int64)
        earlier_row[new_row[new_row >= 0]] = np.flatnonzero(new_row >= 0)
        rows = None if kept is None else kept.updated(earlier_row, session.Xk[earlier_row < 0])
        return _LaidOut(earlier, True, rows, int(np.count_nonzero(earlier_row < 0)))


@dataclass
class _LaidOut:
    """An update's starts: the earlier fit's problems (`earlier`) laid out on the problems as
    posed, Qα carried over where the kernel is the same (`carried`; else Qα read anew);
    the earlier fit's kernel rows carried over to the new rows (`rows`; None: none); the rows
    the update adds (`added`)."""

    earlier: list
    carried: bool
    rows: object = None
    added: int = 0

    def on(self, posed, rows):
        """Each posed problem's points (None when the problems are not the earlier ones)."""
        if len(posed) != len(self.earlier):
            return None
        return [_laid_out(p, rows, _row_keys(var_rows), old, self.carried)
                for (var_rows, p), old in zip(posed, self.earlier)]


def _row_keys(var_rows: np.ndarray) -> np.ndarray:
    """2·row + k for the k-th variable (0 or 1) of each row; −1 for a forgotten row."""
    order = np.argsort(var_rows, kind="stable")
    sorted_rows = var_rows[order]
    first = np.r_[True, sorted_rows[1:] != sorted_rows[:-1]]
    rank = np.arange(var_rows.size) - np.maximum.accumulate(np.where(first, np.arange(var_rows.size), 0))
    keys = np.empty(var_rows.size, dtype=np.int64)
    keys[order] = 2 * sorted_rows + rank
    return np.where(var_rows < 0, -1, keys)


@dataclass
class _Earlier:
    """One problem of the fit an update starts from, per variable: its key on the new rows
    (`_row_keys`, −1: forgotten), α, Qα, its label and its earlier training row."""

    keys: np.ndarray
    alpha: np.ndarray
    q_alpha: np.ndarray
    y: np.ndarray
    rows: np.ndarray


def _without_forgotten(earlier: _Earlier, rows) -> _Earlier:
    """`earlier` with the terms of its forgotten variables of nonzero α taken out of Qα, from
    their kernel rows in the earlier fit's row source `rows`."""
    gone = (earlier.keys < 0) & (earlier.alpha != 0)
    if not gone.any():
        return earlier
    coef = (earlier.y * earlier.alpha)[gone, None]
    terms = earlier.y * rows.products(earlier.rows[gone], coef, earlier.rows)[:, 0]
    return replace(earlier, q_alpha=earlier.q_alpha - terms)


def _laid_out(posed, rows, keys, earlier: _Earlier, carried: bool) -> list:
    """[(α, Qα)]: the earlier fit's on the variables `keys` of `posed`, feasible for its
    equality constraints; [] when they cannot be restored. Where the kernel is the same
    (`carried`), the earlier Qα (without the forgotten variables' terms) serves: the new
    variables' entries from their kernel rows, the restoring's from the rows of the variables
    it moved; else Qα is read from the kernel rows of the nonzero α."""
    problem = posed.problem
    kept = earlier.keys >= 0
    order = np.argsort(earlier.keys[kept])
    old_keys = earlier.keys[kept][order]

    def mapped(values):
        return values[kept][order][at]

    at = np.clip(np.searchsorted(old_keys, keys), 0, max(old_keys.size - 1, 0))
    found = old_keys[at] == keys if old_keys.size else np.zeros(keys.size, dtype=bool)
    alpha = np.zeros(problem.n)
    alpha[found] = mapped(earlier.alpha)[found]
    before = alpha.copy()
    # the sums the problem fixes: its own start's (ν models), else yᵀα = 0
    reference = np.zeros(problem.n) if posed.alpha0 is None else posed.alpha0
    for members, weights in _constraint_groups(problem):
        if not _shift(alpha, problem.upper, members, weights, weights[members] @ (reference - alpha)[members]):
            return []
    everything = np.arange(problem.n)
    if not carried:
        q_alpha = np.zeros(problem.n)
        _add_kernel_terms(q_alpha, rows, problem, alpha, np.flatnonzero(alpha), everything)
        return [(alpha, q_alpha)]
    q_alpha = _carried(problem, rows, found, mapped(earlier.q_alpha), before)
    _add_kernel_terms(q_alpha, rows, problem, alpha - before, np.flatnonzero(alpha != before), everything)
    return [(alpha, q_alpha)]


def _carried(problem, rows, found, old_values, coef) -> np.ndarray:
    """Q·coef over the variables of `problem` (coef 0 on the new variables): `old_values`
    (exact for coef) where `found`, and from the kernel between the nonzero coef's rows and the
    new variables' elsewhere (`RowSource.products`)."""
    out = np.where(found, old_values, 0.0)
    new, nz = np.flatnonzero(~found), np.flatnonzero(coef)
    if new.size and nz.size:
        y = problem.y
        out[new] = y[new] * rows.products(problem.kidx[nz], (y * coef)[nz, None], problem.kidx[new])[:, 0]
    return out


def _shift(alpha, U, members, weights, change) -> bool:
    """Change Σ weights·α over `members` by `change` within the box 0 ≤ α ≤ U, the variables
    of most room first (new rows, at 0, have all of theirs); False when they have too little."""
    if change == 0.0:
        return True
    direction = np.sign(change) * weights
    room = np.where(members, np.where(direction > 0, U - alpha, alpha), 0.0)
    order = np.argsort(-room, kind="stable")
    reach = np.cumsum(room[order])
    if reach[-1] < abs(change):
        return False
    last = int(np.searchsorted(reach, abs(change)))
    amount = room[order[:last + 1]].copy()
    amount[last] -= reach[last] - abs(change)
    alpha[order[:last + 1]] += direction[order[:last + 1]] * amount
    return True
