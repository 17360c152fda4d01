"""Linear SVMs as LIBLINEAR solves them: LinearSVC (hinge or squared hinge, L2 or L1 penalty,
one-vs-rest or Crammer–Singer) and LinearSVR (ε-insensitive or its square).

The soft-margin SVM is the L2-regularised hinge loss (Hastie, Tibshirani & Friedman 2009,
§12.3.2; Fan et al. 2008, (1))

    min_w ½‖w‖² + Σ_i C_i·max(0, 1 − y_i(wᵀx_i + b))        (squared hinge: the max squared).

Each (penalty, loss, dual, multi_class) is one of LIBLINEAR's solvers, numbered as its -s
option (Fan et al. 2008, JMLR 9) and chosen as scikit-learn chooses them: the dual by
coordinate descent (-s 1, 3, 12, 13; `svmkit.solvers.liblinear.dcd`), the primal of the squared losses
by truncated Newton (-s 2, 11; `linear_newton`), the L1-penalised squared hinge by coordinate
descent Newton (-s 5; `l1_svc`) and Crammer and Singer's multi-class SVM by its sequential
dual method (-s 4; `crammer_singer`). `objective_` gives the primal value, and where the solver
has a dual, its value and the gap. With `fit_intercept`, b is the weight of a constant feature
`intercept_scaling` and is penalised with w, as LIBLINEAR's -B and scikit-learn do.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from svmkit._threads import one_blas_thread
from svmkit._validation import check_real, class_weights, encode_classes, is_dask, positive_rows, store_parameters, validate_X, validate_Xy, validate_sample_weight
from svmkit.exceptions import warn
from svmkit.kernels.gram import row_sq_norms
from svmkit.models.conformal import ConformalRegressor, drop_calibration
from svmkit.models.linear import on_cluster
from svmkit.models.plain_state import PlainState
from svmkit.models.retained import RETAINED, appended, remaining, retained
from svmkit.options import Options, reads
from svmkit.parallel.tasks import run_tasks
from svmkit.solvers.liblinear.crammer_singer import crammer_singer
from svmkit.solvers.liblinear.dcd import Stop, dcd_classify, dcd_regress, row_groups
from svmkit.solvers.liblinear.l1_svc import l1_svc
from svmkit.solvers.liblinear.newton import Curvature, Update, l2_loss_newton, without_rows

#: LIBLINEAR's solver (its -s number) for each loss, penalty and dual (scikit-learn's table).
SOLVERS = {"hinge": {"l2": {True: 3}}, "squared_hinge": {"l1": {False: 5}, "l2": {False: 2, True: 1}},
           "epsilon_insensitive": {"l2": {True: 13}}, "squared_epsilon_insensitive": {"l2": {False: 11, True: 12}}}
CRAMMER_SINGER = 4
#: The dual coordinate descent solvers, which `partial_fit` and `forget` warm-start from α.
DUAL_SOLVERS = (1, 3, 12, 13)
#: The primal Newton solvers, which they warm-start from w.
NEWTON_SOLVERS = (2, 11)
#: What a fit that keeps its rows carries to the next update: the dual's α over the rows, or
#: the primal Newton's `newton.Curvature` per problem (its e and q over the rows).
CARRIED = ("retained_dual_", "_newton_curvature")
#: What each solver's passes are, for the warning when it runs out of them.
METHODS = {1: "Dual coordinate descent", 3: "Dual coordinate descent", 12: "Dual coordinate descent",
           13: "Dual coordinate descent", 2: "Newton's method", 11: "Newton's method",
           5: "Coordinate descent", 4: "The Crammer-Singer dual method"}


def solver_number(multi_class, penalty, loss, dual) -> int:
    """LIBLINEAR's solver for the options, or scikit-learn's ValueError naming the combination
    that has none."""
    if multi_class == "crammer_singer":
        return CRAMMER_SINGER
    penalties = SOLVERS[loss]
    if penalty not in penalties:
        problem = f"The combination of penalty='{penalty}' and loss='{loss}' is not supported"
    elif dual not in penalties[penalty]:
        problem = f"The combination of penalty='{penalty}' and loss='{loss}' are not supported when dual={dual}"
    else:
        return penalties[penalty][dual]
    raise ValueError(f"Unsupported set of arguments: {problem}, Parameters: penalty={penalty!r}, loss={loss!r}, "
                     f"dual={dual!r}")


def resolve_dual(dual, loss, penalty, multi_class, X) -> bool:
    """`dual`, with 'auto' resolved as scikit-learn does: the dual when there are fewer samples
    than features, else the primal, each where the combination has it."""
    if dual != "auto":
        return dual
    prefer = bool(X.shape[0] < X.shape[1])
    try:
        solver_number(multi_class, penalty, loss, prefer)
    except ValueError:
        return not prefer
    return prefer


def _rows_of(X, keep):
    """X[keep], without a copy when every row is kept."""
    return X if keep.size == X.shape[0] else X[keep]


def check_row_norms(X) -> None:
    """Raise a ValueError naming the first row whose squared norm ‖x‖² overflows float64: the
    solvers' step sizes 1/‖x‖² and their products wᵀx would be 0 and inf (a model of zeros,
    NumPy's overflow warnings); the norms are taken on X / max|X|, so they cannot overflow."""
    top = float(abs(X).max()) if X.shape[0] * X.shape[1] else 0.0
    if top < np.sqrt(np.finfo(np.float64).max / max(X.shape[1], 1)):
        return
    norms = row_sq_norms(X / top)
    with np.errstate(over="ignore"):
        over = np.flatnonzero(~np.isfinite(norms * top * top))
    if over.size:
        raise ValueError(f"X's values are too large: the squared norm of row {int(over[0])} overflows float64 "
                         f"(largest |X| = {top:g}); scale the data (e.g. StandardScaler or svmkit.LibsvmScaler)")


def _with_rows(alpha, keep, n):
    """Values of the rows `keep` (one row of `alpha` per problem) spread over all n rows, 0 for
    the others."""
    full = np.zeros((alpha.shape[0], n))
    full[:, keep] = alpha
    return full


def _carry(solver, per_problem, keep, n) -> dict:
    """What a fit carries to the next update (`CARRIED`), over all n rows (0 on the rows of
    weight 0, which the solvers do not see): the dual's α, or the primal Newton's `Curvature`s;
    nothing for the other solvers, or where a problem has none."""
    if solver in DUAL_SOLVERS:
        return {"retained_dual_": _with_rows(np.vstack(per_problem), keep, n)}
    if solver not in NEWTON_SOLVERS or any(c is None for c in per_problem):
        return {}
    return {"_newton_curvature": [Curvature(c.outer, _with_rows(c.e[None], keep, n)[0], c.at_zero,
                                            _with_rows(c.q[None], keep, n)[0]) for c in per_problem]}


def known_labels(classes, y) -> np.ndarray:
    """y as positions in `classes` (sorted), or a ValueError naming the first label not in them."""
    y = np.asarray(y)
    pos = np.clip(np.searchsorted(classes, y), 0, classes.size - 1)
    new = np.flatnonzero(classes[pos] != y)
    if new.size:
        label = np.asarray(y[new[0]]).tolist()
        raise ValueError(f"label {label!r} is not one of the classes {classes.tolist()}; pass every class with "
                         f"classes= on the first call of partial_fit")
    return pos


def _decision_rows(X, w, bias):
    """wᵀx + w_b·bias per row from a solver's weights (the last one the constant feature's)."""
    return np.asarray(X @ w[:-1]).ravel() + w[-1] * bias


class _LinearSVM(PlainState, BaseEstimator):
    """Parameter checks, the weighted bounds, the solvers' passes and the fitted attributes
    shared by the two models."""

    _non_finite = ("objective_",)

    _parameter_constraints: dict = {
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "dual": ["boolean", StrOptions({"auto"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "options": [None, Options],
        "keep_data": ["boolean"],
    }
    #: Losses whose squares the solver minimises.
    _squared_losses: tuple[str, ...] = ()

    def fit(self, X, y, sample_weight=None):
        """Fit w and b. X: (n_samples, n_features) dense or sparse; y: labels (LinearSVC) or
        real targets (LinearSVR); a Dask array or dataframe stays on its cluster (dual=False)."""
        if is_dask(X):
            return self._fit_dask(X, y, sample_weight)
        return self._fit_in_memory(X, y, sample_weight)

    def _fit_in_memory(self, X, y, sample_weight, update=None):
        """Fit on rows in memory; `update` (None for a plain fit; keep_data=True makes one) is
        (classes or None, what the earlier fit carried laid out on these rows (`_carried_on`),
        its weights W or None): the rows are then kept, with what the next update starts from
        (`CARRIED`); a solver without a warm start (-s 4, -s 5) fits them from zero, as exact
        and no faster."""
        self.check_parameters()
        X, y = validate_Xy(self, X, y, **self._y_checks)
        check_row_norms(X)
        if update is None and self.keep_data:
            update = (None, {}, None)
        return self._fit_checked(X, y, validate_sample_weight(sample_weight, X), update)

    def _fit_checked(self, X, y, sw, update, copy=True):
        """`_fit_in_memory` on validated rows X (their norms checked), targets y and weights sw;
        `copy=False` keeps X, y and sw as the model's rows without a copy (an update's own).
        BLAS runs on one thread: besides the solvers' own loops, it only takes the products over
        the rows that give objective_, where waking its threads costs more than they save (most
        of all on busy cores)."""
        with one_blas_thread():
            carried = self._fit_rows(X, y, sw, update)
        for name in (*RETAINED, *CARRIED):
            self.__dict__.pop(name, None)  # a refit keeps no rows of an earlier fit
        if update is not None:
            self.__dict__.update(retained(X, y, sw, copy))
            self.__dict__.update(carried)
        return self

    def _starts(self, update, keep, bounds, problems):
        """Each problem's start, on the rows `keep`: None for a fit that keeps no rows; for the
        dual, α clipped into [lower_i, U_i] (`bounds`; U_i moves when class_weight='balanced'
        counts new rows), None without one; for the primal Newton, its `newton.Update` (w and
        the curvature of the earlier fit, each None without one)."""
        if update is None:
            return [None] * problems
        _, carried, W = update
        if bounds is None:
            curvatures = carried.get("_newton_curvature", [None] * problems)
            return [Update(None if W is None else W[k],
                           None if c is None else Curvature(c.outer, c.e[keep], c.at_zero, c.q[keep]))
                    for k, c in enumerate(curvatures)]
        alpha = carried.get("retained_dual_")
        return [None] * problems if alpha is None else [np.clip(a[keep], *bounds) for a in alpha]

    def _carried_on(self, rows) -> dict:
        """What this fit carries (`CARRIED`) laid out on an update's rows: row i is the earlier
        row `rows[i]`, or new where that is −1 (its α and e 0); the earlier rows not among them
        take their terms out of the curvature's sums."""
        old = rows >= 0

        def laid_out(per_row):
            out = np.zeros((*per_row.shape[:-1], rows.size))
            out[..., old] = per_row[..., rows[old]]
            return out

        carried = {}
        if hasattr(self, "retained_dual_"):
            carried["retained_dual_"] = laid_out(self.retained_dual_)
        curvatures = vars(self).get("_newton_curvature")
        if curvatures is not None:
            gone = np.ones(self.retained_X_.shape[0], dtype=bool)
            gone[rows[old]] = False
            gone = np.flatnonzero(gone)
            if gone.size:
                curvatures = [without_rows(c, self.retained_X_[gone], self._bias(), c.e[gone], c.q[gone])
                              for c in curvatures]
            carried["_newton_curvature"] = [Curvature(c.outer, laid_out(c.e), c.at_zero, laid_out(c.q))
                                            for c in curvatures]
        return carried

    def _weights(self):
        """The fitted weights, a row per problem, the constant feature's last (the solvers' W)."""
        coef = np.atleast_2d(self.coef_)
        last = np.ravel(self.intercept_) / self._bias() if self.fit_intercept else np.zeros(coef.shape[0])
        return np.column_stack([coef, np.broadcast_to(last, coef.shape[0])])

    def forget(self, indices):
        """Remove the training rows at `indices` (positions in the order seen) and return the
        model fitted on the rest, warm-started from the previous α with those rows taken out
        (the dual solvers) or from the previous w (the primal Newton)."""
        keep = remaining(self, indices)
        self.check_parameters()
        update = (getattr(self, "classes_", None), self._carried_on(np.flatnonzero(keep)), self._weights())
        return self._fit_checked(self.retained_X_[keep], self.retained_y_[keep], self.retained_weight_[keep], update,
                                 copy=False)

    def _grow(self, X, y, sample_weight, classes):
        """partial_fit's later calls: the rows appended (their labels among `classes`), α of the
        new rows 0."""
        self.check_parameters()
        new, y = validate_Xy(None, X, y, **self._y_checks)
        check_row_norms(new)  # the kept rows were checked when they came
        X, y, sw = appended(self, new, y, sample_weight)
        rows = np.concatenate([np.arange(X.shape[0] - new.shape[0]), np.full(new.shape[0], -1)])
        return self._fit_checked(X, y, sw, (classes, self._carried_on(rows), self._weights()), copy=False)

    def check_parameters(self):
        """scikit-learn's InvalidParameterError for what scikit-learn refuses (its messages, its
        order); then what the solvers need beyond it: finite C and tol, and max_iter within the
        compiled loops' int64 counter; the options this model reads."""
        self._validate_params()
        reads(type(self).__name__, "scheduler_address")(self.options)
        check_real(self.C, "C", low=0)
        check_real(self.tol, "tol", low=0)
        if self.max_iter > np.iinfo(np.int64).max:
            raise ValueError(f"max_iter must be a number of passes below 2**63, got max_iter={self.max_iter}")

    def _bounds(self, c):
        """(U, D) of every row from its C_i: (C_i, 0) for the plain loss, (∞, 1/(2C_i)) squared."""
        if self.loss in self._squared_losses:
            return np.full(c.size, np.inf), 0.5 / c
        return c, np.zeros(c.size)

    def _bias(self) -> float:
        """The constant feature whose weight is the intercept (0: none)."""
        return float(self.intercept_scaling) if self.fit_intercept else 0.0

    def _seed(self):
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _passes(self):
        """max_iter as a Python int (int64 in the compiled loops)."""
        return int(self.max_iter)

    def _store(self, W, passes, objectives, solver):
        """coef_ and intercept_ from the solvers' weights W (a row per problem, the last entry
        the constant feature's), n_iter_ (the most passes of any problem), objective_; warns
        when a problem ran out of passes."""
        drop_calibration(self)
        self.coef_ = W[:, :-1]
        self.intercept_ = W[:, -1] * self._bias() if self.fit_intercept else 0.0
        self.solver_ = solver
        self.n_iter_ = int(max(passes))
        if self.n_iter_ >= self.max_iter:
            # scikit-learn's wording, then which of LIBLINEAR's methods stopped where
            warn(f"Liblinear failed to converge, increase the number of iterations. ({METHODS[solver]} stopped "
                 f"at max_iter={self.max_iter}.)", ConvergenceWarning)
        self.objective_ = np.array(objectives, dtype=np.float64)

    def _newton(self, X, t, c, tol, regression, start):
        """-s 2 / -s 11 for targets t, from `start` (a `newton.Update`, or None: from 0): (w,
        Newton steps, (primal, dual, gap), the `newton.Curvature` at w or None), the dual at the
        α_i = 2 C_i·(signed residual) that the optimality conditions give for w, whose X̃ᵀα is
        w − ∇f(w) (∇f = w − Σ_i α_i x̃_i)."""
        bias = self._bias()
        epsilon = float(self.epsilon) if regression else 0.0
        result = l2_loss_newton(X, bias, t, c, Stop(tol, self._passes()), epsilon=epsilon, regression=regression,
                                start=start)
        f = result.decision
        if regression:
            r = t - f
            alpha = 2 * c * np.sign(r) * np.maximum(np.abs(r) - epsilon, 0.0)
            linear = float(t @ alpha) - epsilon * float(np.abs(alpha).sum())
        else:
            alpha = 2 * c * t * np.maximum(1 - t * f, 0.0)
            linear = float(t @ alpha)
        w_alpha = result.w - result.gradient
        dual = linear - 0.5 * float(w_alpha @ w_alpha) - float((alpha * alpha) @ (0.25 / c))
        return result.w, result.n_iter, (result.objective, dual, result.objective - dual), result.curvature

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _run(self, solve, problems):
        """solve(problem) for every problem, on threads when there are several (the loops
        release the GIL)."""
        return run_tasks(solve, [(p,) for p in problems])


class LinearSVC(ClassifierMixin, _LinearSVM):
    """Linear support vector classification as LIBLINEAR solves it, scikit-learn compatible.

    Minimises ½‖w‖² + Σ_i C_i·ℓ(y_i(wᵀx_i + b)) (Fan et al. 2008, (1)), ℓ(t) = max(0, 1 − t) ('hinge')
    or max(0, 1 − t)² ('squared_hinge'), C_i = C · class_weight[y_i] · sample_weight_i; with
    penalty='l1', ‖w‖₁ in place of ½‖w‖². One problem per class against the rest (one for two
    classes), or Crammer and Singer's single multi-class problem. The solver is LIBLINEAR's for
    (penalty, loss, dual): -s 1 / -s 3 dual coordinate descent, -s 2 primal Newton, -s 5
    L1 coordinate descent, -s 4 Crammer–Singer (see the module docstring).

    Parameters
    ----------
    penalty : {'l1', 'l2'}, default 'l2'
        'l1' gives sparse weights; only with the squared hinge and the primal.
    loss : {'hinge', 'squared_hinge'}, default 'squared_hinge'
    dual : bool or 'auto', default 'auto'
        Solve the dual (coordinate descent) or the primal; 'auto' takes the dual when there are
        fewer samples than features and the primal otherwise, where the combination has them
        (as scikit-learn).
    tol : float, default 1e-4
        The stopping tolerance of the solver (LIBLINEAR's -e): the dual's projected gradient
        spread; the primal's gradient norm relative to its value at w = 0, scaled by the
        smaller class's share of the rows (LIBLINEAR's rule); the L1 solver's summed violation
        relative to its first pass's, scaled alike; Crammer–Singer's gradient spread.
    C : float, default 1.0
    multi_class : {'ovr', 'crammer_singer'}, default 'ovr'
        'crammer_singer' ignores penalty, loss and dual.
    fit_intercept : bool, default True
    intercept_scaling : float, default 1.0
        The constant feature whose weight is the intercept (penalised with w).
    class_weight : dict, 'balanced' or None
        'balanced' counts rows by their sample weights (as scikit-learn).
    verbose : int, default 0
        Accepted for scikit-learn compatibility.
    random_state : int, RandomState or None, default None
        The order of the coordinates (not used by the primal Newton).
    max_iter : int, default 1000
        Passes (Newton steps for the primal) at most.
    options : Options or None, default None
        `svmkit.Options`; reads scheduler_address: a Dask X (array or dataframe) and y are fitted
        by the primal Newton (dual=False or 'auto') on that cluster.
    keep_data : bool, default False
        Keep every training row (`retained_X_`, `retained_y_`, `retained_weight_`) so that
        `partial_fit` and `forget` update the model exactly; costs the rows' memory. `partial_fit`
        keeps them always. An update warm-starts the dual coordinate descent from the kept α
        (`retained_dual_`) or the primal Newton from w, preconditioned by the Hessian sum its
        previous fit left (rows with few entries); penalty='l1' and crammer_singer have no warm
        start and fit every row again, as exact and no faster.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,), or 0.0 without fit_intercept
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Most passes any problem took.
    objective_ : ndarray of shape (n_problems, 3)
        Per problem: the primal value, the dual value and their gap (≥ 0); the L1 problem has
        no dual here (NaN).
    solver_ : int
        LIBLINEAR's solver that fitted the model, by its -s number (1, 2, 3, 4 or 5; `dual`
        'auto' resolved), which a LIBLINEAR model file names.
    retained_X_, retained_y_, retained_weight_ : the training rows, kept with keep_data=True or partial_fit
    retained_dual_ : ndarray of shape (n_problems, n_rows)
        The dual solution α per problem over the kept rows (0 for rows of weight 0).

    Examples
    --------
    >>> import svmkit
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> model = svmkit.LinearSVC(C=0.1, random_state=0).fit(X, y)
    >>> round(model.score(X, y), 2)
    0.96
    """

    _parameter_constraints: dict = {**_LinearSVM._parameter_constraints,
                                    "penalty": [StrOptions({"l1", "l2"})],
                                    "loss": [StrOptions({"hinge", "squared_hinge"})],
                                    "multi_class": [StrOptions({"ovr", "crammer_singer"})],
                                    "class_weight": [None, dict, StrOptions({"balanced"})]}
    _squared_losses = ("squared_hinge",)

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0, multi_class="ovr",
                 fit_intercept=True, intercept_scaling=1.0, class_weight=None, verbose=0, random_state=None,
                 max_iter=1000, options=None, keep_data=False):
        store_parameters(self, locals())

    _fit_dask = on_cluster.fit_linear_svc
    _y_checks: dict = {}

    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Fit on the rows seen so far: the first call fits (on `classes`, all of them, when
        given) and keeps the rows; each later call appends X, y and returns the optimum on all
        rows, warm-started from the previous α (the dual; new rows at 0) or w (the primal)."""
        if not hasattr(self, "coef_"):
            given = None if classes is None else np.unique(classes)
            return self._fit_in_memory(X, y, sample_weight, (given, {}, None))
        return self._grow(X, y, sample_weight, self.classes_)

    def _fit_rows(self, X, y, sw, update):
        """Fit w and b on validated rows; what the fit carries to the next update (`_carry`)."""
        if update is not None and update[0] is not None:
            self.classes_, y_enc = update[0], known_labels(update[0], y)
        else:
            self.classes_, y_enc = encode_classes(y, "LinearSVC")
        dual = resolve_dual(self.dual, self.loss, self.penalty, self.multi_class, X)
        cw = class_weights(self.class_weight, self.classes_, y_enc, sample_weight=sw)
        solver = solver_number(self.multi_class, self.penalty, self.loss, dual)
        c = self.C * cw[y_enc] * sw
        keep = positive_rows(c, "class_weight × sample_weight" if self.class_weight is not None else "sample_weight")
        Xk, c, y_enc = _rows_of(X, keep), c[keep], y_enc[keep]
        if solver == CRAMMER_SINGER:
            self._fit_crammer_singer(Xk, y_enc, c)
            return {}
        positives = [1] if self.classes_.shape[0] == 2 else list(range(self.classes_.shape[0]))
        seed = None if solver in NEWTON_SOLVERS else self._seed()  # the Newton draws no order
        starts = self._starts(update, keep, (0.0, self._bounds(c)[0]) if solver in DUAL_SOLVERS else None,
                              len(positives))
        solve = {1: self._dual_problem, 3: self._dual_problem, 2: self._primal_problem, 5: self._l1_problem}[solver]
        results = self._run(lambda k: solve(Xk, np.where(y_enc == positives[k], 1.0, -1.0), c, (seed, starts[k])),
                            range(len(positives)))
        weights, passes, objectives = zip(*(r[:3] for r in results))
        self._store(np.vstack(weights), passes, objectives, solver)
        return _carry(solver, [r[3] if len(r) > 3 else None for r in results], keep, X.shape[0])

    def _primal_tol(self, t):
        """LIBLINEAR's tolerance of its primal classification solvers: tol times the smaller
        class's share of the rows."""
        positive = int(np.count_nonzero(t > 0))
        return self.tol * max(min(positive, t.size - positive), 1) / t.size

    def _dual_problem(self, X, t, c, seeded):
        """-s 1 / -s 3 for labels t = ±1; `seeded` is (seed, α to start from or None)."""
        bias = self._bias()
        upper, diag = self._bounds(c)
        seed, start = seeded
        w, alpha, it = dcd_classify(X, bias, row_groups(t, upper, diag), Stop(self.tol, self._passes(), seed),
                                    start)
        loss = np.maximum(1.0 - t * _decision_rows(X, w, bias), 0.0) ** (2 if self.loss == "squared_hinge" else 1)
        primal = 0.5 * float(w @ w) + float(c @ loss)
        dual = float(alpha.sum()) - 0.5 * float(w @ w) - 0.5 * float(diag @ (alpha * alpha))
        return w, it, (primal, dual, primal - dual), alpha

    def _primal_problem(self, X, t, c, seeded):
        """-s 2 for labels t = ±1 from seeded[1] (a `newton.Update`, or None: from 0;
        deterministic: no seed)."""
        return self._newton(X, t, c, self._primal_tol(t), False, seeded[1])

    def _l1_problem(self, X, t, c, seeded):
        """-s 5 for labels t = ±1: ‖w‖₁ + Σ C_i max(0, 1 − t_i f_i)² (always from 0)."""
        bias = self._bias()
        w, it = l1_svc(X, bias, t, c, self._primal_tol(t), self._passes(), seeded[0])
        primal = float(np.abs(w).sum()) + float(c @ np.maximum(1.0 - t * _decision_rows(X, w, bias), 0.0) ** 2)
        return w, it, (primal, np.nan, np.nan)

    def _fit_crammer_singer(self, X, y_enc, c):
        """-s 4; with two classes one column, w_1 − w_0 (as scikit-learn)."""
        bias = self._bias()
        k = self.classes_.shape[0]
        W, alpha, it = crammer_singer(X, bias, y_enc, c, k, self.tol, self._passes(), self._seed())
        if not np.isfinite(W).all():
            raise ValueError(f"multi_class='crammer_singer' gives weights beyond float64's range with C={self.C!r} "
                             f"(intercept_scaling={self.intercept_scaling!r}); lower C or scale the data")
        scores = np.column_stack([_decision_rows(X, W[:, m], bias) for m in range(k)])
        rows = np.arange(y_enc.size)
        margins = scores - scores[rows, y_enc][:, None] + 1.0
        margins[rows, y_enc] = 0.0
        regulariser = 0.5 * float(np.sum(W * W))
        primal = regulariser + float(c @ margins.max(axis=1))
        dual = -regulariser - float(alpha.sum() - alpha[rows, y_enc].sum())
        W = W.T
        if k == 2:
            W = W[1:] - W[:1]
        self._store(W, [it], [(primal, dual, primal - dual)], CRAMMER_SINGER)
        return None

    _required = ("classes_", *_LinearSVM._required)

    def _check_state(self, state, problems):
        k = np.size(state["classes_"])
        if k < 2 or np.unique(state["classes_"]).size != k:
            raise ValueError(f"classes_ {np.ravel(state['classes_']).tolist()} are not two or more distinct labels")
        if problems != (1 if k == 2 else k):
            raise ValueError(f"coef_ has {problems} rows for {k} classes")

    def decision_function(self, X):
        """wᵀx + b per row; for two classes one column flattened (> 0 means classes_[1])."""
        check_is_fitted(self)
        X = validate_X(self, X, reset=False)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class of the largest decision value (two classes: its sign)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.int64)]
        return self.classes_[np.argmax(scores, axis=1)]


class LinearSVR(ConformalRegressor, RegressorMixin, _LinearSVM):
    """Linear support vector regression as LIBLINEAR solves it, scikit-learn compatible.

    Minimises ½‖w‖² + Σ_i C_i·ℓ(y_i − wᵀx_i − b), ℓ(r) = max(0, |r| − ε) ('epsilon_insensitive')
    or its square ('squared_epsilon_insensitive'); C_i = C · sample_weight_i. The linear soft
    ε-band SVR (Vapnik 1995; Bi & Bennett 2003). The dual by coordinate descent (-s 13 / -s 12)
    or, for the squared loss, the primal by Newton's method (-s 11).

    Parameters
    ----------
    epsilon : float, default 0.0
        Half-width of the band inside which errors cost nothing, in y's units.
    C, tol, max_iter, fit_intercept, intercept_scaling, random_state, verbose :
        As for `LinearSVC`; the dual's tol bounds the pass's summed violation relative to the
        first pass's, the primal's the gradient norm relative to its value at w = 0.
    loss : {'epsilon_insensitive', 'squared_epsilon_insensitive'}, default 'epsilon_insensitive'
    dual : bool or 'auto', default 'auto'
        'auto': the primal for the squared loss when there are at least as many samples as
        features, else the dual (as scikit-learn).
    options : Options or None, default None
        As for `LinearSVC`.
    keep_data : bool, default False
        As for `LinearSVC` (`retained_dual_` holds β).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : ndarray of shape (1,), or 0.0 without fit_intercept
    n_iter_ : int
    objective_ : ndarray of shape (3,)
        The primal value, the dual value and their gap.
    solver_ : int
        LIBLINEAR's solver that fitted the model, by its -s number (11, 12 or 13).
    retained_X_, retained_y_, retained_weight_, retained_dual_ : as for `LinearSVC`

    Examples
    --------
    >>> import numpy as np, svmkit
    >>> X = np.linspace(-1, 1, 50)[:, None]
    >>> model = svmkit.LinearSVR(C=10.0, epsilon=0.01, loss="squared_epsilon_insensitive",
    ...                          random_state=0).fit(X, 3 * X[:, 0] + 1)
    >>> np.round(model.coef_, 1).tolist(), np.round(model.intercept_, 1).tolist()
    ([3.0], [1.0])
    """

    _parameter_constraints: dict = {**_LinearSVM._parameter_constraints, "epsilon": [Real],
                                    "loss": [StrOptions({"epsilon_insensitive", "squared_epsilon_insensitive"})]}
    _squared_losses = ("squared_epsilon_insensitive",)

    def __init__(self, *, epsilon=0.0, tol=1e-4, C=1.0, loss="epsilon_insensitive", fit_intercept=True,
                 intercept_scaling=1.0, dual="auto", verbose=0, random_state=None, max_iter=1000,
                 options=None, keep_data=False):
        store_parameters(self, locals())

    def check_parameters(self):
        """As `_LinearSVM`'s, and ε finite and ≥ 0 (scikit-learn lets any real through to
        LIBLINEAR, whose dual steps assume ε ≥ 0)."""
        super().check_parameters()
        check_real(self.epsilon, "epsilon", low=0, low_inclusive=True)

    _fit_dask = on_cluster.fit_linear_svr
    _y_checks: dict = {"y_numeric": True}

    def partial_fit(self, X, y, sample_weight=None):
        """Fit on the rows seen so far: the first call fits and keeps the rows; each later call
        appends X, y and returns the optimum on all rows, warm-started from the previous β (the
        dual; new rows at 0) or w (the primal)."""
        if not hasattr(self, "coef_"):
            return self._fit_in_memory(X, y, sample_weight, (None, {}, None))
        return self._grow(X, y, sample_weight, None)

    def _fit_rows(self, X, y, sw, update):
        """Fit w and b on validated rows; what the fit carries to the next update (`_carry`)."""
        dual = resolve_dual(self.dual, self.loss, "l2", "ovr", X)
        solver = solver_number("ovr", "l2", self.loss, dual)
        keep = positive_rows(self.C * sw)
        Xk, y, c = _rows_of(X, keep), np.asarray(y, dtype=np.float64)[keep], self.C * sw[keep]
        if solver == 11:
            w, it, objective, carried = self._newton(Xk, y, c, self.tol, True, self._starts(update, keep, None, 1)[0])
        else:
            upper = self._bounds(c)[0]
            w, it, objective, carried = self._dual_problem(Xk, y, c, self._starts(update, keep, (-upper, upper), 1)[0])
        self._store(w[None, :], [it], objective, solver)
        self.coef_ = self.coef_[0]
        if self.fit_intercept:
            self.intercept_ = self.intercept_[:1]
        return _carry(solver, [carried], keep, X.shape[0])

    def _dual_problem(self, X, y, c, start):
        """-s 12 / -s 13, from β = `start` (None: 0)."""
        bias = self._bias()
        upper, diag = self._bounds(c)
        w, beta, it = dcd_regress(X, bias, y, row_groups(upper, diag), float(self.epsilon),
                                  Stop(self.tol, self._passes(), self._seed()), start)
        residual = y - _decision_rows(X, w, bias)
        loss = np.maximum(np.abs(residual) - self.epsilon, 0.0) ** (2 if self.loss in self._squared_losses else 1)
        primal = 0.5 * float(w @ w) + float(c @ loss)
        dual = float(y @ beta) - self.epsilon * float(np.abs(beta).sum()) - 0.5 * float(w @ w) \
            - 0.5 * float(diag @ (beta * beta))
        return w, it, (primal, dual, primal - dual), beta

    def predict(self, X):
        """wᵀx + b for every row of X."""
        check_is_fitted(self)
        X = validate_X(self, X, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
