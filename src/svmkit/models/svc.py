"""C-support vector classification (Cortes & Vapnik 1995; Chang & Lin 2011, §2.1).

Each class pair (a, b) is the dual (Cortes & Vapnik 1995; Chang & Lin 2011, §2.1)

    min ½ αᵀQα − 1ᵀα,  yᵀα = 0,  0 ≤ α_i ≤ C_i,  Q_ij = y_i y_j K(x_i, x_j)

with C_i = C · class_weight[y_i] · sample_weight_i; C = inf is the hard-margin dual (Boser, Guyon & Vapnik 1992).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import check_is_fitted

from svmkit._validation import check_bool, check_class_weight, check_real, encode_classes, one_of, real, validate_sample_weight, validate_Xy
from svmkit.exceptions import NotSeparableError
from svmkit.models import duals, on_cluster, ovo
from svmkit.models.expansion import read_only
from svmkit.models.probability import couple, fit_sigmoid, pairwise_probabilities
from svmkit.models.smo_base import (LP_MAX_ROWS, PROBABILITY_FOLDS, BatchFits, SMOModel, available_if, each_task,
                                    probability_folds, read_back)
from svmkit.options import reads
from svmkit.solvers.feasibility import is_separable
from svmkit.solvers.row_source import row_products
from svmkit.solvers.smo import UnboundedDualError
from svmkit.solvers.smo_batch import DualBatch, batch_decisions, batchable, fit_sigmoids, solve_batch

#: One-vs-one decision values (rows × pairs) prediction holds at once where it reduces them
#: row by row (votes, one-vs-rest scores, probabilities).
DECISION_BLOCK = 2**22


def ragged_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of range(s, s + n) for every (s, n) of (starts, lengths)."""
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1] if ends.size else 0)


def check_class_weight_labels(class_weight, classes):
    """Raise if the class_weight dict names a label that is not one of classes."""
    known = set(np.asarray(classes).tolist())
    unknown = [label for label in class_weight if label not in known]
    if unknown:
        raise ValueError(f"class_weight names labels {unknown} that are not in y "
                         f"(classes: {np.asarray(classes).tolist()})")


def class_weights(cw, classes, y_enc, sample_weight=None) -> np.ndarray:
    """The weight of each class from `class_weight` (None, 'balanced' or a dict of labels in
    `classes`), each finite and ≥ 0; 'balanced' counts each row as its `sample_weight` when
    given (scikit-learn's LinearSVC does, its SVC does not)."""
    if check_class_weight(cw) is None:
        return np.ones(classes.shape[0])
    if isinstance(cw, dict):
        check_class_weight_labels(cw, classes)
    weights = compute_class_weight(cw, classes=classes, y=classes[y_enc], sample_weight=sample_weight)
    for label, w in zip(classes.tolist(), weights.tolist()):
        check_real(w, f"class_weight[{label!r}]", low=0, low_inclusive=True)
    return weights


def row_weights(est, sample_weight, X, y_enc) -> np.ndarray:
    """Each row's weight, sample_weight × class_weight[y] of `est` (its classes_ set); a
    ValueError naming both when every one is zero, where the solvers would divide by 0."""
    weight = validate_sample_weight(sample_weight, X) * class_weights(est.class_weight, est.classes_, y_enc)[y_enc]
    if not (weight > 0).any():
        raise ValueError(f"class_weight × sample_weight is zero for every sample (class_weight={est.class_weight!r}); "
                         "at least one sample must have a positive weight")
    return weight


class BaseSVC(ClassifierMixin, SMOModel):
    """One-vs-one support vector classification; subclasses give each pair's dual problem."""

    def _check_class_weight(self, y_enc):
        return class_weights(self.class_weight, self.classes_, y_enc)

    _one_vs_one = True
    _constraints = {**SMOModel._constraints, "decision_function_shape": one_of("ovr", "ovo"),
                    "break_ties": check_bool, "class_weight": check_class_weight}

    def fit(self, X, y, sample_weight=None):
        """Fit one dual per class pair. X: (n_samples, n_features) dense or CSR, or a kernel matrix."""
        return super().fit(X, y, sample_weight)

    def _targets(self, X, y, sample_weight):
        """Validated X, y encoded as class numbers, and each row's weight (sample × class)."""
        X, y = validate_Xy(self, X, y)
        self.classes_, y_enc = encode_classes(y, type(self).__name__)
        sw = validate_sample_weight(sample_weight, X)
        self.class_weight_ = self._check_class_weight(y_enc)
        return X, y_enc, self._row_weights(sw, y_enc)

    def _row_weights(self, sample_weight, y_enc):
        """Each row's weight in the dual (C-SVC: the factor of C_i): sample × class weight."""
        return sample_weight * self.class_weight_[y_enc]

    def _pair_rows(self, y_enc, weight, a, b):
        """The rows of positive weight of class pair (a, b), a's first, and their ±1 labels."""
        idx = np.concatenate([np.flatnonzero((y_enc == c) & (weight > 0)) for c in (a, b)])
        ypair = np.where(y_enc[idx] == a, 1.0, -1.0)
        if not (ypair > 0).any() or not (ypair < 0).any():
            empty = self.classes_[a] if not (ypair > 0).any() else self.classes_[b]
            raise ValueError(f"class {empty.item()!r} has no sample of positive weight (class_weight × "
                             f"sample_weight), so the pair of classes ({self.classes_[a].item()!r}, "
                             f"{self.classes_[b].item()!r}) cannot be fitted")
        return idx, ypair

    def _pair_layout(self, y_enc, weight):
        """Every class pair's rows of positive weight, a's first (as `_pair_rows` gives them),
        concatenated: (rows, their ±1 labels, each pair's offsets); None when a class has no
        such row (`_pair_rows` raises for its pairs)."""
        n_classes = self.classes_.shape[0]
        kept = np.flatnonzero(weight > 0)
        order = kept[np.argsort(y_enc[kept], kind="stable")]
        count = np.bincount(y_enc[kept], minlength=n_classes)
        if not count.all():
            return None
        start = np.r_[0, np.cumsum(count)[:-1]]
        first, second = ovo.pair_classes(n_classes)
        lengths = np.stack([count[first], count[second]], axis=1).ravel()
        idx = order[ragged_ranges(np.stack([start[first], start[second]], axis=1).ravel(), lengths)]
        ypair = np.repeat(np.tile([1.0, -1.0], first.size), lengths)
        return idx, ypair, np.r_[0, np.cumsum(count[first] + count[second])]

    def _solve_at_once(self, rows, kidx, ypair, weight, offsets):
        """The duals of many small problems (pairs or folds: rows `kidx`, labels and weights
        concatenated, problem k from offsets[k]) solved in one call (`solvers.smo_batch`), as
        `_solve_pair` solves each: (batch, result, each one's factor from its α to the
        model's); None where they cannot be (the per-pair path then solves them, and raises
        what it raises)."""
        if "smo-batch" not in self._backend().solvers or not batchable(np.diff(offsets), np.unique(kidx).size, rows):
            return None
        batch = self._dual_batch(ypair, weight, kidx, offsets)
        if batch is None:
            return None
        res = solve_batch(batch, rows, self.tol, self.max_iter, self.shrinking)
        scale = self._batch_scale(res)
        if scale is None or not (np.isfinite(res.alpha).all() and np.isfinite(res.rho).all()):
            return None
        return batch, res, scale

    def _dual_batch(self, ypair, weight, kidx, offsets) -> DualBatch | None:
        """The problems' duals as one batch, as `_solve_pair` poses each; None where it would raise."""
        raise NotImplementedError

    def _batch_scale(self, res):
        """Each problem's factor from the solver's α to the model's; None where `_solve_pair` would raise."""
        return np.ones(res.rho.size)

    def _solve_problems(self, rows, row_index, y_enc, weight, starts):
        layout = self._pair_layout(y_enc, weight) if starts is None and self._side_by_side() else None
        if layout is not None:
            idx, ypair, offsets = layout
            solved = self._solve_at_once(rows, row_index[idx], ypair, weight[idx], offsets)
            if solved is not None:
                return BatchFits(idx, *solved)
        pairs = list(ovo.class_pairs(self.classes_.shape[0]))

        def solve_pair(k, problem_rows):
            a, b = pairs[k]
            idx, ypair = self._pair_rows(y_enc, weight, a, b)
            # on a device, the pair's rows over its own columns when the fit's rows are its own
            pair_rows, kidx = problem_rows(row_index[idx])
            problem, res, scale = self._solve_pair(pair_rows, kidx, ypair, weight[idx], (a, b),
                                                   starts[k] if starts else None)
            fit = read_back(idx, problem, res, scale)
            self._summary(fit, self._pair_summary(res, (a, b)))
            return fit

        return self._backend().each_problem(rows, solve_pair, range(len(pairs)), side_by_side=self._side_by_side())

    def _calibrate(self, X, rows, row_index, y_enc, weight):
        """Platt's sigmoid per class pair, fitted on decision values of a 5-fold cross-validation
        within the pair (LIBSVM's svm_binary_svc_probability); the folds' duals are solved on
        the training kernel's rows, so no kernel value is computed twice."""
        self.probA_, self.probB_ = np.empty(0), np.empty(0)
        if not self.probability:
            return
        seed = self._probability_seed(X, y_enc)
        if self._calibrate_at_once(rows, row_index, y_enc, weight, seed):
            return
        pairs = [(a, b, *self._pair_rows(y_enc, weight, a, b)) for a, b in ovo.class_pairs(self.classes_.shape[0])]
        # each pair's rows are dealt into its own folds, as LIBSVM deals them
        folds = [probability_folds(idx.size, seed + k) for k, (_, _, idx, _) in enumerate(pairs)]

        def fold_decisions(task):
            k, f = task
            a, b, idx, ypair = pairs[k]
            return self._fold_decisions(rows, row_index[idx], ypair, weight[idx], folds[k] == f, (a, b))

        tasks = [(k, f) for k in range(len(pairs)) for f in range(PROBABILITY_FOLDS)]
        decisions = each_task(rows, fold_decisions, tasks, self.verbose)
        params = []
        for k, (_, _, idx, ypair) in enumerate(pairs):
            dec = np.empty(idx.size)
            for (task_pair, f), values in zip(tasks, decisions):
                if task_pair == k:
                    dec[folds[k] == f] = values
            params.append(fit_sigmoid(dec, ypair))
        self.probA_, self.probB_ = (np.array(v) for v in zip(*params))

    def _calibrate_at_once(self, rows, row_index, y_enc, weight, seed) -> bool:
        """`_calibrate`'s folds solved in one call (`_solve_at_once`) and the sigmoids fitted
        together; False where they cannot be (the per-fold path then runs)."""
        layout = self._pair_layout(y_enc, weight)
        if layout is None:
            return False
        idx, ypair, offsets = layout
        sizes = np.diff(offsets)
        fold = np.concatenate([probability_folds(n, seed + k) for k, n in enumerate(sizes)])
        pair = np.repeat(np.arange(sizes.size), sizes)
        # fold problem k·F + f: pair k's rows outside fold f, in the pair's order
        task = pair * PROBABILITY_FOLDS + fold
        train = np.concatenate([np.flatnonzero(fold != f) for f in range(PROBABILITY_FOLDS)])
        train_task = np.concatenate([task[fold != f] - fold[fold != f] + f for f in range(PROBABILITY_FOLDS)])
        by_task = np.argsort(train_task, kind="stable")
        train, train_task = train[by_task], train_task[by_task]
        n_tasks = sizes.size * PROBABILITY_FOLDS
        train_sizes = np.bincount(train_task, minlength=n_tasks)
        train_offsets = np.r_[0, np.cumsum(train_sizes)]
        positives = np.bincount(train_task, weights=ypair[train] > 0, minlength=n_tasks)
        if np.any((positives == 0) | (positives == train_sizes)):
            return False  # a training part of one class: the per-fold path gives its ±1
        solved = self._solve_at_once(rows, row_index[idx[train]], ypair[train], weight[idx[train]], train_offsets)
        if solved is None:
            return False
        batch, res, scale = solved
        test = np.argsort(task, kind="stable")
        test_offsets = np.r_[0, np.cumsum(np.bincount(task, minlength=n_tasks))]
        coef = scale[batch.owner()] * batch.problems.y * res.alpha
        dec = np.empty(idx.size)
        dec[test] = batch_decisions(rows, batch, coef, row_index[idx[test]], test_offsets) - \
            np.repeat(scale * res.rho, np.diff(test_offsets))
        self.probA_, self.probB_ = fit_sigmoids(dec, ypair, offsets).T.copy()
        return True

    def _fold_decisions(self, rows, kidx, ypair, weight, test, pair):
        """The decision values of the rows `test` from the pair's dual solved on the others; a
        training part with one class only gives its ±1, as LIBSVM does."""
        train = ~test
        if not test.any():
            return np.empty(0)
        labels = np.unique(ypair[train])
        if labels.size < 2:
            return np.full(np.count_nonzero(test), labels[0] if labels.size else 0.0)
        try:
            problem, res, scale = self._solve_pair(rows, kidx[train], ypair[train], weight[train], pair, None)
        except ValueError as err:
            raise ValueError(f"probability=True: a fold of the internal {PROBABILITY_FOLDS}-fold "
                             f"cross-validation of class pair {self._pair_label(pair)} cannot be fitted: {err}") from None
        coef = scale * problem.y * res.alpha
        nz = coef != 0
        return row_products(rows, problem.kidx[nz], coef[nz], kidx[test]) - scale * res.rho

    @available_if(SMOModel._check_proba)
    def predict_proba(self, X):
        """P(class | x) for every row of X, columns in `classes_` order: each pair's sigmoid of its
        decision value (probA_, probB_), coupled across pairs (Wu, Lin & Weng 2004, method 2).

        `predict` keeps the decision-function rule (the one-vs-one vote); the class of highest
        probability is `predict_by_probability`. The two can differ for points near a boundary:
        the sigmoids are fitted on held-out decision values, so they need not cross 1/2 where
        the decision value crosses 0, and coupling weighs every pair where the vote counts wins."""
        check_is_fitted(self)
        if np.size(getattr(self, "probA_", ())) == 0:
            raise NotFittedError("predict_proba is not available when fitted with probability=False")
        return self._per_rows(X, self._proba_from_raw)

    def _per_rows(self, X, finish, raw=None, width=None):
        """finish(raw(rows)) for every row of X, a bounded number of rows at a time: with many
        classes the values of every pair for every row would not fit in memory. `raw`: LIBSVM's
        decision values (`_raw_of`, `width` the pairs) unless given."""
        X = self._check_predict_X(X)
        raw, width = raw or self._raw_of, width or self._intercept_.size
        n, step = X.shape[0], max(1, DECISION_BLOCK // max(width, 1))
        if n <= step:
            return finish(raw(X))
        return np.concatenate([finish(raw(X[lo:lo + step], lo)) for lo in range(0, n, step)])

    def _per_rows_voted(self, X, finish):
        """finish(votes, confidences) for every row of X (`ovo.PairVotes`): many classes' pair
        decisions folded in by the core as it forms them, never held."""
        n_classes = self.classes_.shape[0]
        weights = self._W.votes(self._intercept_)

        def votes_of(rows, first_row=0):
            return self._check_finite(self._predict_centres.products(rows, weights), first_row)

        return self._per_rows(X, lambda out: finish(out[:, :n_classes], out[:, n_classes:]), votes_of, 2 * n_classes)

    def _folds_votes(self):
        """Whether votes and confidences come from the core's fold rather than from the decisions:
        many classes, whose weight matrix is not formed."""
        return self.classes_.shape[0] > 2 and self._W.dense is None

    def _support_kernel_products(self, X, W):
        """K(X, SV) @ W on the backend when W is formed, else class by class on the host."""
        if W.dense is not None:
            return super()._support_kernel_products(X, W.dense)
        return self._predict_centres.products(X, W)

    def _proba_from_raw(self, dec):
        """Class probabilities from LIBSVM's decision values, one column per class pair."""
        return couple(pairwise_probabilities(dec, self.probA_, self.probB_, self.classes_.shape[0]))

    @available_if(SMOModel._check_proba)
    def predict_log_proba(self, X):
        """log P(class | x): the log of `predict_proba`."""
        return np.log(self.predict_proba(X))

    @available_if(SMOModel._check_proba)
    def predict_by_probability(self, X):
        """The class of highest `predict_proba` for every row of X (svm-predict -b 1's rule; ties
        to the first class)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def _assemble(self, y_enc, summary):
        return ovo.assemble(summary.rows, summary.coef, summary.owner, y_enc, self.classes_.shape[0])

    def _prepare_prediction(self):
        """As for every kernel model, with the one-vs-one weight matrix; binary coefficients and
        intercept change sign so that a positive decision means classes_[1], as in scikit-learn."""
        super()._prepare_prediction()
        self._W = ovo.PairWeights(self._dual_coef_, self.n_support_)
        if self.classes_.shape[0] == 2:
            self.intercept_ = -self._intercept_
            self.dual_coef_ = -self._dual_coef_

    def _solve_pair(self, rows, kidx, ypair, weight, pair, start):
        """Solve the dual of one class pair (rows `kidx` of the row source): the problem, the
        solver's result and the factor from its α to the model's."""
        raise NotImplementedError

    def _pair_summary(self, res, pair):
        return ()

    def _pair_label(self, pair):
        a, b = self.classes_[list(pair)].tolist()
        return f"({a!r}, {b!r})"

    def decision_function(self, X):
        """Signed distance to each pair's separating surface (binary: > 0 means classes_[1])."""
        check_is_fitted(self)
        if self.decision_function_shape == "ovr" and self._folds_votes():
            return self._per_rows_voted(X, ovo.ovr_scores)
        return self._per_rows(X, self._decision_from_raw)

    def _decision_from_raw(self, dec):
        """From LIBSVM's decision values, one column per class pair (> 0 votes the pair's first
        class), the shape `decision_function_shape` asks for."""
        n_classes = self.classes_.shape[0]
        if n_classes == 2:
            return -dec.ravel()
        if self.decision_function_shape == "ovr":
            return ovo.ovr_decision(dec, n_classes)
        return dec

    def predict(self, X):
        """The class of every row of X: LIBSVM's one-vs-one vote (ties to the lower class)."""
        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if self._folds_votes():
            return self._per_rows_voted(X, self._predict_from_votes)
        return self._per_rows(X, self._predict_from_raw)

    def _predict_from_raw(self, dec):
        n_classes = self.classes_.shape[0]
        if self.break_ties and self.decision_function_shape == "ovr" and n_classes > 2:
            return self.classes_[np.argmax(ovo.ovr_decision(dec, n_classes), axis=1)]
        return self.classes_[np.argmax(ovo.vote(dec, n_classes), axis=1)]

    def _predict_from_votes(self, votes, conf):
        score = ovo.ovr_scores(votes, conf) if self.break_ties else votes
        return self.classes_[np.argmax(score, axis=1)]

    @property
    def coef_(self):
        """w = Σ y_i α_i x_i per class pair (Cortes & Vapnik 1995); linear kernel only, read-only."""
        coef = self._primal_weights()
        return read_only(-coef if self.classes_.shape[0] == 2 else coef)


class SVC(BaseSVC):
    """C-support vector classification, scikit-learn compatible, exact against LIBSVM (-s 0).

    Each class pair solves the dual min ½ αᵀQα − 1ᵀα, yᵀα = 0, 0 ≤ α_i ≤ C_i (Cortes & Vapnik 1995;
    Chang & Lin 2011, §2.1); the decision is f(x) = Σ y_i α_i K(x_i, x) + b, one-vs-one for more classes.

    Parameters
    ----------
    C : float, default 1.0
        Bound on each α (Cortes & Vapnik 1995); `np.inf` fits the hard margin (Boser, Guyon & Vapnik 1992) and
        raises `NotSeparableError` when the kernel cannot separate the classes.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'} or callable, default 'rbf'
        A callable k(A, B) returns K of shape (len(A), len(B)) with K[i, j] the kernel of A[i]
        and B[j]. Predicting calls k(X, support_vectors_), where scikit-learn calls k(X, X_train)
        and keeps the support's columns: the same values for any such k, as only the support
        vectors are kept (and saved).
    degree : int, default 3
        Degree of the 'poly' kernel (γ<x, z> + coef0)^degree.
    gamma : 'scale', 'auto' or float, default 'scale'
        γ of 'rbf', 'poly', 'sigmoid': 'scale' = 1 / (n_features · Var X), 'auto' = 1 / n_features.
    coef0 : float, default 0.0
        Constant of 'poly' and 'sigmoid'.
    shrinking : bool, default True
        LIBSVM's shrinking of variables that cannot join a violating pair.
    probability : bool, default False
        Also fit Platt's sigmoid P(y = a | x) = 1 / (1 + exp(A·f(x) + B)) per class pair (Platt
        1999; Lin, Lin & Weng 2007) on decision values of an internal 5-fold cross-validation, for
        `predict_proba`. It costs about five more fits, on the kernel rows the fit computes.
    tol : float, default 1e-3
        Stop when the maximal KKT violation m(α) − M(α) ≤ tol (LIBSVM's -e).
    cache_size : float, default 1024
        Megabytes of kernel rows kept (float32); a bound, taken only as rows are computed.
    class_weight : dict, 'balanced' or None
        C_i = C · class_weight[y_i] · sample_weight_i.
    verbose : bool, default False
        Print LIBSVM's per-pair summary.
    max_iter : int, default -1
        Pair updates allowed per problem; −1: LIBSVM's safety cap, max(10⁷, 100·n) for a dual of
        n variables. A stop there warns (ConvergenceWarning) and sets `fit_status_` to 1.
    decision_function_shape : {'ovr', 'ovo'}, default 'ovr'
    break_ties : bool, default False
        With 'ovr', predict the best one-vs-rest score instead of the vote.
    random_state : int, RandomState or None, default None
        Seed of the folds of `probability`; None derives them from the data, so that two fits
        on the same data give the same probabilities. The fit itself is deterministic.
    warm_start : bool, default False
        A refit on the same data and kernel starts from the previous solution times C'/C,
        which is feasible for the new C and whose gradient follows exactly (Q is linear); a
        path of growing C then costs a fraction of cold fits. Any other change starts cold.
        The ν models scale by ν'/ν instead, when the result stays within the box.
    options : Options or None, default None
        Where the fit runs (`svmkit.Options`; None: its defaults); reads device, scheduler_address,
        max_rounds and partitioning. device='cuda' computes the kernel rows by float32 GEMM
        blocks into a row cache on the GPU, where the solver's loops run; prediction's kernel
        blocks too, in float32.

    Attributes
    ----------
    classes_, support_, support_vectors_, n_support_, dual_coef_, intercept_, coef_ (linear
    kernel), fit_status_, shape_fit_, n_features_in_ :
        As scikit-learn's SVC.
    gamma_ : float
        The γ the kernel used.
    class_weight_ : ndarray of shape (n_classes,)
    objective_ : ndarray of shape (n_pairs,)
        Dual objective per class pair.
    n_iter_ : ndarray of shape (n_pairs,)
        Pair updates per class pair.
    free_support_, bounded_support_ : ndarray
        Training rows with 0 < α < C and with α = C.
    loo_bound_ : float
        #SV / N, Vapnik's bound on the expected leave-one-out error (Vapnik 1995).
    probA_, probB_ : ndarray of shape (n_pairs,)
        The sigmoids' A and B per class pair, applied to LIBSVM's decision values (> 0 votes the
        pair's first class); empty when `probability` is False. When a fold's training part
        holds one class only (a class of one sample), its held-out rows get LIBSVM's ±1.
    cascade_history_ : list of dict
        Dask X only: per cascade round and problem, #SV, the objective and the variables that
        violated the optimality conditions (round 0: the tree's root).
    cascade_timings_ : list of (str, float)
        Dask X only: each task of the cascade and its seconds on its worker.

    Examples
    --------
    >>> import svmkit
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> model = svmkit.SVC(C=10.0).fit(X, y)
    >>> model.predict(X[:2]).tolist()
    [0, 0]
    """

    _scaled_params = ("C",)
    _constraints = {**BaseSVC._constraints, "C": real(low=0, allow_inf=True),
                    "options": reads("SVC", "device", "scheduler_address", "max_rounds", "partitioning")}

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability=False, tol=1e-3, cache_size=1024, class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", break_ties=False, random_state=None, warm_start=False, options=None):
        self.C = C
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

    _fit_dask = on_cluster.fit_classifier

    def _solve_pair(self, rows, kidx, ypair, weight, pair, start):
        upper = self.C * weight
        if np.isinf(self.C):
            self._check_separable(rows, kidx, ypair, pair)
        problem, _ = duals.c_svc(ypair, upper, kidx)
        try:
            return problem, self._solve(problem, rows, start=start), 1.0
        except UnboundedDualError:
            raise NotSeparableError(self._not_separable_message(pair)) from None

    def _dual_batch(self, ypair, weight, kidx, offsets):
        if np.isinf(self.C):
            return None  # each pair's separability is tested first
        problem, _ = duals.c_svc(ypair, self.C * weight, kidx)
        return DualBatch(problem, offsets)

    def _pair_summary(self, res, pair):
        """LIBSVM prints ν = Σα / (C l) when both classes of the pair have the same C."""
        cw = self.class_weight_[list(pair)]
        if cw[0] != cw[1] or np.isinf(self.C):
            return ()
        return (f"nu = {res.alpha.sum() / (self.C * cw[0] * res.alpha.size):f}",)

    def _not_separable_message(self, pair):
        return (f"the classes {self._pair_label(pair)} are not separable with kernel={self.kernel!r}: "
                "the hard-margin problem (C=inf) has no solution; use a finite C")

    def _check_separable(self, rows, kidx, ypair, pair):
        if kidx.size <= LP_MAX_ROWS and not is_separable(rows.exact_block(kidx), ypair):
            raise NotSeparableError(self._not_separable_message(pair))
