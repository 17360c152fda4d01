"""Linear SVMs by dual coordinate descent, as LIBLINEAR solves them: LinearSVC (hinge or
squared hinge, one-vs-rest) and LinearSVR (ε-insensitive or its square).

Seed 000 (9.40): the soft-margin SVM is the L2-regularised hinge loss

    min_w ½‖w‖² + Σ_i C_i·max(0, 1 − y_i(wᵀx_i + b))        (squared hinge: the max squared),

and its dual (seed 001 (4) with the linear kernel) is what the solver descends; `objective_`
gives both values and their gap. With `fit_intercept`, b is the weight of a constant feature
`intercept_scaling` and is regularised with w, as LIBLINEAR's -B and scikit-learn do.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from svmkit._validation import (check_bool, check_int, check_max_iter, check_params, check_seed, encode_classes, one_of,
                                real, validate_sample_weight, validate_X, validate_Xy)
from svmkit.models.smo_base import positive_rows
from svmkit.models.svc import class_weights
from svmkit.parallel.tasks import run_tasks
from svmkit.solvers.dcd import dcd_classify, dcd_regress, row_groups


def _check_dual(value, name):
    if isinstance(value, str) and value == "auto":
        return value
    if value is not True:
        raise ValueError(f"{name} must be True or 'auto': only the dual coordinate descent is built, got {name}={value!r}")
    return value


def _check_max_iter(value, name):
    if check_int(value, name) < 1:
        raise ValueError(f"{name} must be a positive number of passes, got {name}={value!r}")
    return check_max_iter(value, name)


def _rows_of(X, keep):
    """X[keep], without a copy when every row is kept."""
    return X if keep.size == X.shape[0] else X[keep]


class _LinearSVM(BaseEstimator):
    """Validation, the weighted bounds and the coordinate descent shared by the two models."""

    _constraints = {"C": real(low=0), "tol": real(low=0), "max_iter": _check_max_iter, "dual": _check_dual,
                    "fit_intercept": check_bool, "intercept_scaling": real(low=0), "random_state": check_seed}
    #: Losses whose squares the solver minimises.
    _squared_losses: tuple[str, ...] = ()

    def _validate(self, X, y, sample_weight, classification):
        check_params(self, self._constraints)
        X, y = validate_Xy(self, X, y, y_numeric=not classification)
        return X, y, validate_sample_weight(sample_weight, X)

    def _bounds(self, c):
        """(U, D) of every row from its C_i: (C_i, 0) for the plain loss, (∞, 1/(2C_i)) squared."""
        if self.loss in self._squared_losses:
            return np.full(c.size, np.inf), 0.5 / c
        return c, np.zeros(c.size)

    def _bias(self) -> float:
        """The constant feature whose weight is the intercept (0: none)."""
        return self.intercept_scaling if self.fit_intercept else 0.0

    def _seed(self):
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _store(self, weights, passes, objectives):
        """coef_ and intercept_ from the solver's weights (the last one the constant feature's),
        n_iter_, objective_; warns when a problem ran out of passes."""
        bias = self._bias()
        W = np.vstack(weights)
        self.coef_ = W[:, :-1]
        self.intercept_ = W[:, -1] * bias
        self.n_iter_ = int(max(passes))
        if self.n_iter_ >= self.max_iter:
            warnings.warn("Dual coordinate descent failed to converge, increase the number of iterations "
                          f"(max_iter={self.max_iter}).", ConvergenceWarning, stacklevel=3)
        self.objective_ = np.array(objectives)

    @staticmethod
    def _decision_rows(X, w, bias):
        """wᵀx + w_b·bias per row from the solver's weights (the last one the constant feature's)."""
        return np.asarray(X @ w[:-1]).ravel() + w[-1] * bias

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _run(self, solve, problems):
        """solve(problem) for every problem, on threads when there are several (the loops
        release the GIL)."""
        return run_tasks(solve, [(p,) for p in problems])


class LinearSVC(ClassifierMixin, _LinearSVM):
    """Linear support vector classification by dual coordinate descent (LIBLINEAR -s 3 / -s 1),
    scikit-learn compatible.

    Minimises ½‖w‖² + Σ_i C_i·ℓ(y_i(wᵀx_i + b)) (seed 000 (9.40)), ℓ(t) = max(0, 1 − t) ('hinge')
    or max(0, 1 − t)² ('squared_hinge'), C_i = C · class_weight[y_i] · sample_weight_i; one
    problem per class against the rest (one for two classes).

    Parameters
    ----------
    C : float, default 1.0
    loss : {'hinge', 'squared_hinge'}, default 'squared_hinge'
    penalty : {'l2'}, default 'l2'
    dual : True or 'auto', default 'auto'
        The dual is what is solved (coordinate descent); no primal solver is built.
    tol : float, default 1e-4
        Stop when the projected gradient's spread over a pass is at most tol (LIBLINEAR's -e).
    max_iter : int, default 1000
        Passes over the data at most.
    class_weight : dict, 'balanced' or None
    fit_intercept : bool, default True
    intercept_scaling : float, default 1.0
        The constant feature whose weight is the intercept (regularised with w).
    multi_class : {'ovr'}, default 'ovr'
    random_state : int, RandomState or None, default None
        The order of the coordinates.
    verbose : int, default 0
        Accepted for scikit-learn compatibility.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Most passes any problem took.
    objective_ : ndarray of shape (n_problems, 3)
        Per problem: the primal value (9.40), the dual value and their gap (≥ 0), which the
        stopping rule makes small.

    Examples
    --------
    >>> import svmkit
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> model = svmkit.LinearSVC(C=0.1, random_state=0).fit(X, y)
    >>> round(model.score(X, y), 2)
    0.96
    """

    _constraints = {**_LinearSVM._constraints, "loss": one_of("hinge", "squared_hinge"), "multi_class": one_of("ovr"),
                    "penalty": one_of("l2")}
    _squared_losses = ("squared_hinge",)

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0, multi_class="ovr",
                 fit_intercept=True, intercept_scaling=1.0, class_weight=None, verbose=0, random_state=None,
                 max_iter=1000):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter

    def fit(self, X, y, sample_weight=None):
        """Fit w and b. X: (n_samples, n_features) dense or CSR."""
        X, y, sw = self._validate(X, y, sample_weight, classification=True)
        self.classes_, y_enc = encode_classes(y, "LinearSVC")
        cw = class_weights(self.class_weight, self.classes_, y_enc)
        c = self.C * cw[y_enc] * sw
        keep = positive_rows(c)
        Xk, c, y_enc = _rows_of(X, keep), c[keep], y_enc[keep]
        upper, diag = self._bounds(c)
        bias = self._bias()
        positives = [1] if self.classes_.shape[0] == 2 else list(range(self.classes_.shape[0]))
        seed = self._seed()

        def solve(k):
            yk = np.where(y_enc == k, 1.0, -1.0)
            w, alpha, it = dcd_classify(Xk, bias, *row_groups(yk, upper, diag), self.tol, self.max_iter, seed)
            margin = 1.0 - yk * self._decision_rows(Xk, w, bias)
            loss = np.maximum(margin, 0.0) ** (2 if self.loss == "squared_hinge" else 1)
            primal = 0.5 * float(w @ w) + float(c @ loss)
            dual = float(alpha.sum()) - 0.5 * float(w @ w) - 0.5 * float(diag @ (alpha * alpha))
            return w, it, (primal, dual, primal - dual)

        self._store(*zip(*self._run(solve, positives)))
        return self

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


class LinearSVR(RegressorMixin, _LinearSVM):
    """Linear support vector regression by dual coordinate descent (LIBLINEAR -s 13 / -s 12),
    scikit-learn compatible.

    Minimises ½‖w‖² + Σ_i C_i·ℓ(y_i − wᵀx_i − b), ℓ(r) = max(0, |r| − ε) ('epsilon_insensitive')
    or its square ('squared_epsilon_insensitive'); C_i = C · sample_weight_i. The linear soft
    ε-band SVR of seed 004.

    Parameters
    ----------
    epsilon : float, default 0.0
        Half-width of the band inside which errors cost nothing, in y's units.
    C, tol, max_iter, fit_intercept, intercept_scaling, random_state, verbose, dual :
        As for `LinearSVC`; tol bounds the pass's summed violation relative to the first pass's.
    loss : {'epsilon_insensitive', 'squared_epsilon_insensitive'}, default 'epsilon_insensitive'

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : ndarray of shape (1,)
    n_iter_ : int
    objective_ : ndarray of shape (3,)
        The primal value, the dual value and their gap.

    Examples
    --------
    >>> import numpy as np, svmkit
    >>> X = np.linspace(-1, 1, 50)[:, None]
    >>> model = svmkit.LinearSVR(C=10.0, epsilon=0.01, loss="squared_epsilon_insensitive",
    ...                          random_state=0).fit(X, 3 * X[:, 0] + 1)
    >>> np.round(model.coef_, 1).tolist(), np.round(model.intercept_, 1).tolist()
    ([3.0], [1.0])
    """

    _constraints = {**_LinearSVM._constraints, "epsilon": real(low=0, low_inclusive=True),
                    "loss": one_of("epsilon_insensitive", "squared_epsilon_insensitive")}
    _squared_losses = ("squared_epsilon_insensitive",)

    def __init__(self, *, epsilon=0.0, tol=1e-4, C=1.0, loss="epsilon_insensitive", fit_intercept=True,
                 intercept_scaling=1.0, dual="auto", verbose=0, random_state=None, max_iter=1000):
        self.epsilon = epsilon
        self.tol = tol
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.dual = dual
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter

    def fit(self, X, y, sample_weight=None):
        """Fit w and b. X: (n_samples, n_features) dense or CSR; y: real targets."""
        X, y, sw = self._validate(X, y, sample_weight, classification=False)
        keep = positive_rows(self.C * sw)
        Xk, y, c = _rows_of(X, keep), np.asarray(y, dtype=np.float64)[keep], self.C * sw[keep]
        upper, diag = self._bounds(c)
        bias = self._bias()
        w, beta, it = dcd_regress(Xk, bias, y, *row_groups(upper, diag), float(self.epsilon), self.tol,
                                  self.max_iter, self._seed())
        residual = y - self._decision_rows(Xk, w, bias)
        loss = np.maximum(np.abs(residual) - self.epsilon, 0.0) ** (2 if self.loss in self._squared_losses else 1)
        primal = 0.5 * float(w @ w) + float(c @ loss)
        dual = float(y @ beta) - self.epsilon * float(np.abs(beta).sum()) - 0.5 * float(w @ w) \
            - 0.5 * float(diag @ (beta * beta))
        self._store([w], [it], (primal, dual, primal - dual))
        self.coef_, self.intercept_ = self.coef_[0], self.intercept_[:1]
        return self

    def predict(self, X):
        """wᵀx + b for every row of X."""
        check_is_fitted(self)
        X = validate_X(self, X, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_[0]
