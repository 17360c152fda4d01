"""C-support vector classification (Cortes & Vapnik 1995; Chang & Lin 2011, §2.1).

Each class pair (a, b) is the dual (Cortes & Vapnik 1995; Chang & Lin 2011, §2.1)

    min ½ αᵀQα − 1ᵀα,  yᵀα = 0,  0 ≤ α_i ≤ C_i,  Q_ij = y_i y_j K(x_i, x_j)

with C_i = C · class_weight[y_i] · sample_weight_i; C = inf is the hard-margin dual (Boser, Guyon & Vapnik 1992).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from svmkit._validation import check_bool, check_class_weight, one_of, real, store_parameters
from svmkit.models.conformal import ConformalClassifier
from svmkit.models.smo import formulations, on_cluster, ovo
from svmkit.models.expansion import read_only
from svmkit.models.retained import check_labels
from svmkit.models.smo.probability import couple, pairwise_probabilities
from svmkit.models.smo.base import SMOModel, available_if
from svmkit.options import reads

#: One-vs-one decision values (rows × pairs) prediction holds at once where it reduces them
#: row by row (votes, one-vs-rest scores, probabilities).
DECISION_BLOCK = 2**22


class BaseSVC(ConformalClassifier, ClassifierMixin, SMOModel):
    """One-vs-one support vector classification: its prediction; subclasses name each pair's
    dual (`_formulation`)."""

    _constraints = {**SMOModel._constraints, "decision_function_shape": one_of("ovr", "ovo"),
                    "break_ties": check_bool, "class_weight": check_class_weight}

    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Fit on the rows (X, y) added to every row seen: the first call fits (`classes`: every
        label the later calls may bring, scikit-learn's convention), a later one returns the
        exact optimum on all rows, warm-started from the previous α with the new rows at 0."""
        if not hasattr(self, "shape_fit_"):
            self._partial_classes = None if classes is None else np.unique(np.asarray(classes))
        known = getattr(self, "_partial_classes", None)
        check_labels(getattr(self, "classes_", None) if known is None else known, y)
        return self._partial_fit(X, y, sample_weight)

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

    def _prediction(self):
        """As for every kernel model, with the one-vs-one weight matrix; binary coefficients and
        intercept change sign so that a positive decision means classes_[1], as in scikit-learn."""
        prepared = {**super()._prediction(), "_W": ovo.PairWeights(self._dual_coef_, self.n_support_)}
        if self.classes_.shape[0] == 2:
            prepared.update(intercept_=-self._intercept_, dual_coef_=-self._dual_coef_)
        return prepared

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
        vectors are kept (and saved). Under device='cuda' it is called on the host, unless wrapped
        in `svmkit.OnDevice` (see `Options`).
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
        path of growing C then costs a fraction of cold fits. In memory, any other change
        starts cold. The ν models scale by ν'/ν instead, when the result stays within the box.
        On a Dask X of the fitted shape, SVC and SVR start the cascade from `support_` and
        its coefficients times C'/C in place of the tree wherever every partition finds that
        start feasible (each row's label and weight admit its coefficient), also on other
        data of that shape: a start changes the time, not the optimum. A model loaded from a
        file continues a fit stopped by `Options(max_rounds=…)` this way.
    keep_data : bool, default False
        Keep every training row (`retained_X_`, `retained_y_`, `retained_weight_`) so that
        `partial_fit` and `forget` update the model exactly; costs the rows' memory.
        `partial_fit` keeps them always.
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
        Dask X only: per cascade round and problem, #SV, the objective, the variables that
        violated the optimality conditions by more than tol against the last solve's threshold
        (against the extremes over every row when that solve lacks a side or moved nothing)
        and those admitted to the round's solve, the gap, the rows the check skipped and
        checked, the coefficients that changed, the kernel values computed and the round's
        seconds (round 0: the tree's root).
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

    _formulation = formulations.CSVC
    _constraints = {**BaseSVC._constraints, "C": real(low=0, allow_inf=True),
                    "options": reads("SVC", "device", "scheduler_address", "max_rounds", "partitioning")}

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability=False, tol=1e-3, cache_size=1024, class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", break_ties=False, random_state=None, warm_start=False, keep_data=False, options=None):
        store_parameters(self, locals())

    _fit_dask = on_cluster.fit_classifier
