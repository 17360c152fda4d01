"""Least-squares support vector machines (Suykens & Vandewalle 1999; Suykens et al. 2002): kernel
ridge with an unpenalised intercept, for regression and classification.

The regularisation γ of Suykens & Vandewalle is svmkit's `C` (so that it cannot be confused with the RBF γ,
`gamma`), their α and b are `dual_coef_` and `intercept_`. Regression solves (Suykens et al. 2002, ch. 3)

    [[0, 1ᵀ], [1, K + I/C]]·[b; α] = [0; y],   f(x) = Σ_i α_i K(x, x_i) + b,

by one Cholesky (or eigen) factorisation of H = K + I/C and the Schur complement of the
border. Classification (Suykens & Vandewalle 1999) solves [[0, yᵀ], [y, Ω + I/C]]·[b; α] = [0; 1] with
Ω = (y yᵀ) ∘ K; since Ω + I/C = D H D for D = diag(y), y_i ∈ {−1, +1}, its solution is the
regression one on the targets y (their α is D·α), so every class of a one-vs-rest fit shares one
factorisation. Every training point is a support vector.

Row weights v_i (`sample_weight`, and `class_weight` for classification) weight each squared
error, (C/2)Σ v_i e_i² (Suykens, De Brabanter, Lukas & Vandewalle 2002, "Weighted least squares
support vector machines: robustness and sparse approximation", Neurocomputing 48): H = K +
V⁻¹/C = S⁻¹(SKS + I/C)S⁻¹ with S = diag(√v), so H⁻¹ = S(SKS + I/C)⁻¹S on the scaled kernel's
factorisation, and a row of weight 0 gets α_i = 0.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from svmkit._metrics import r2_from_residuals
from svmkit._arrays import to_host
from svmkit._validation import check_bool, check_class_weight, check_real, encode_classes, one_of, real, row_weights, store_parameters, validate_Xy, validate_sample_weight
from svmkit.models.dense import on_cluster
from svmkit.models.smo import ovo
from svmkit.models.conformal import JackknifePlus
from svmkit.models.dense.base import DenseExpansionModel
from svmkit.models.dense.updates import UpdatableClosedForm
from svmkit.models.expansion import FitSession, Targets
from svmkit.models.smo.formulations import class_pairs
from svmkit.options import reads
from svmkit.solvers.dense.factorisations import bordered_loo, bordered_solution, leave_one_out_blocks


def _bordered_fit(factor, Y, s, loo):
    """(α, b, LOO residuals or None) of the bordered system for the targets Y (n × k), from the
    factorisation of SKS + I/C (S = diag(s); s None: of K + I/C): H⁻¹ = S(SKS + I/C)⁻¹S."""
    B = np.column_stack([np.ones(Y.shape[0]), Y])
    if s is None:
        solved = to_host(factor.solve(B))
    else:
        solved = s[:, None] * to_host(factor.solve(s[:, None] * B))
    alpha, b, eta = bordered_solution(solved)
    if not loo:
        return alpha, b, None
    inverse_diag = to_host(factor.inverse_diag())
    return alpha, b, bordered_loo(alpha, eta, inverse_diag if s is None else s * s * inverse_diag)


class BaseLSSVM(UpdatableClosedForm, DenseExpansionModel):
    """The LS-SVM's bordered system (Suykens & Vandewalle 1999) on one factorisation per problem."""

    _constraints = {**DenseExpansionModel._constraints, "C": real(low=0), "loo": check_bool,
                    "keep_data": check_bool}

    def _fit_targets(self, session: FitSession, Y, rows=None):
        """α (n × k), b (k) and, with `loo`, the LOO residuals (n × k) for the targets Y (n × k)
        on the training rows `rows` (all by default)."""
        backend, kernel, Xk, xp = session.backend, session.kernel, session.Xk, session.backend.xp
        n = Y.shape[0]
        solver = self._solver_for(session, n)
        s = None if session.weight is None else np.sqrt(session.weight if rows is None else session.weight[rows])
        if solver == "nystrom":
            if s is not None:
                raise ValueError("sample_weight and class_weight take an exact solver ('cholesky' or 'eigen'), "
                                 "not 'nystrom'")
            centres, beta, b = self._nystrom(session, Xk if rows is None else Xk[rows], Y, 1.0 / self.C, bias=True)
            return centres, beta, b, None
        if self.loo and s is not None and not np.all(s > 0):
            raise ValueError("loo=True needs every row's weight positive: a row of weight 0 takes no part in "
                             "the fit, so leaving it out changes nothing to measure")
        shift = 1.0 / self.C
        if rows is None:
            factor = self._kept_factor(session, solver, shift, s)
        elif self._K is None:
            # a pair within 'auto''s exact size in a problem past it: its own kernel
            factor = backend.factorise(solver, kernel, Xk[rows], shift, s, exact=self.loo)
        else:
            at = xp.asarray(rows)
            K = self._K[xp.ix_(at, at)]
            if s is not None:
                K *= xp.asarray(np.outer(s, s))
            factor = backend.factor_of(solver, K, shift, exact=self.loo)
        if rows is None:
            self._keep_loo_inverse(lambda: leave_one_out_blocks(factor, s, bordered=True))
        alpha, b, loo = _bordered_fit(factor, Y, s, self.loo)
        return np.arange(n), alpha, b, loo

    def _keep_loo_inverse(self, blocks) -> None:
        """Keep what the leave-one-out fits' predictions need (`JackknifePlus`, LSSVR's only)."""

    def _loo_scores(self, session: FitSession, values):
        """Leave-one-out score for each C in `values`, from factorisations of K + I/C
        (`shifted_scores`: one eigendecomposition serves many C); a C at which K + I/C is not
        positive definite gives a NotPositiveDefiniteError in place of its score."""
        shifts = [1.0 / check_real(C, "C", low=0) for C in values]
        Y, y = session.target
        if self._uses_votes():
            raise ValueError("the LOO search takes binary or one-vs-rest LSSVC (one factorisation per cell "
                             "serves every class); set multi_class='ovr'")
        s = None if session.weight is None else np.sqrt(session.weight)
        if s is not None and not np.all(s > 0):
            raise ValueError("the LOO search needs every row's weight positive")

        def score(at):
            return self._loo_score(Y, _bordered_fit(at, Y, s, True)[2], y)

        K = session.backend.matrix(session.kernel, session.Xk, s)
        return list(session.backend.shifted_scores(K, shifts, score))

    def _uses_votes(self):
        return False

    def _solve_session(self, session: FitSession, starts):
        """The problems on one kernel: one-vs-one pairs share the whole kernel matrix; a problem
        on every row has the backend make its own (from rows when it streams them). The N × N
        kernel (on a GPU, its memory) is not kept past the fit, a failed one included."""
        shared = self._uses_votes() and self._solver_for(session, session.X.shape[0]) != "nystrom"
        self._K = session.backend.matrix(session.kernel, session.Xk) if shared else None
        try:
            centres, alpha, b = self._fit_problems(session, *session.target)
        finally:
            del self._K
        self._store_expansion(session, centres, alpha, b)


class LSSVR(JackknifePlus, RegressorMixin, BaseLSSVM):
    """Least-squares SVM regression (Suykens et al. 2002, ch. 3): min ½wᵀw + (C/2)Σe_i² subject to
    y_i = wᵀφ(x_i) + b + e_i, solved in the dual as the bordered system above.

    Parameters
    ----------
    C : float, default=1.0
        Suykens & Vandewalle's γ: the weight of the squared errors; the ridge on K is 1/C.
    kernel, gamma, degree, coef0 : as SVR's ('rbf', 'scale', 3, 0.0).
    solver : {'auto', 'cholesky', 'eigen', 'nystrom'}, default='auto'
        As KernelRidge's; 'nystrom' fits b unpenalised beside the centres' weights.
    n_components, centers, random_state, tol : the Nyström centres and CG tolerance, as KernelRidge's.
    loo : bool, default=False
        Also compute the exact leave-one-out residuals α_i / (M⁻¹)_ii (Cawley & Talbot 2004).
    options : Options or None, default=None
        `svmkit.Options`; reads device and scheduler_address, as KernelRidge's: device='cuda' runs
        the kernel and the 'cholesky' or 'eigen' solver on the GPU, and 'nystrom''s K_NM blocks
        with the normal equations or CG products.
    keep_data : bool, default=False
        Keep every training row (`retained_X_`, `retained_y_`, `retained_weight_`) so that
        `partial_fit` and `forget` update the model exactly; costs the rows' memory.
        `partial_fit` keeps them always. As KernelRidge's: the float64 Cholesky factor of
        K + I/C is kept with it and bordered or downdated, O(N²·m) for m rows.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, n_samples)
        Suykens & Vandewalle's α; every training point is a support vector (`support_` is every row).
    intercept_ : ndarray of shape (1,)
        b.
    loo_residuals_ : ndarray of shape (n_samples,)
        y_i − f₋ᵢ(x_i).
    loo_score_ : float
        R² of the leave-one-out predictions y − loo_residuals_.
    conformity_scores_ : ndarray of shape (n_calibration,)
        |y − f(x)| of the rows given to `conformalize` (split conformal `predict_interval`;
        `fit_conformalize` gives jackknife+ from the exact leave-one-out fits instead).

    Examples
    --------
    >>> import numpy as np
    >>> from svmkit import LSSVR
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> model = LSSVR(C=100.0, gamma=10.0).fit(X, 2 + np.sin(4 * X[:, 0]))
    >>> round(float(model.predict([[0.5]])[0]), 2)
    2.91
    """

    _constraints = {**BaseLSSVM._constraints, "options": reads("LSSVR", "device", "scheduler_address")}

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, solver="auto",
                 n_components=None, centers="uniform", random_state=None, tol=1e-6, loo=False, options=None,
                 keep_data=False):
        store_parameters(self, locals())

    _fit_dask = on_cluster.fit_lssvr

    def fit(self, X, y, sample_weight=None):
        """Fit α and b. X: (n_samples, n_features) dense or CSR, or a kernel matrix;
        sample_weight weights each row's squared error (C_i = C · sample_weight_i)."""
        return super().fit(X, y, sample_weight)

    def partial_fit(self, X, y, sample_weight=None):
        """Fit on every row seen: the first call fits X, later ones add X's rows by bordering
        the factor of K + I/C (O(N²·m) for m rows; `loo_residuals_` updated exactly)."""
        return self._partial_fit(X, y, sample_weight, None)

    def _targets(self, X, y, sample_weight):
        X, y = validate_Xy(self, X, y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        return Targets(X, (y[:, None], y), None if sample_weight is None else validate_sample_weight(sample_weight, X))

    def _fit_problems(self, session, Y, y):
        centres, alpha, b, loo = self._fit_targets(session, Y)
        if loo is not None:
            self.loo_residuals_ = loo[:, 0]
            self.loo_score_ = self._loo_score(Y, loo, y)
        return centres, alpha, b

    def _loo_score(self, Y, loo, y):
        return r2_from_residuals(y, loo[:, 0])


class LSSVC(ClassifierMixin, BaseLSSVM):
    """Least-squares SVM classification (Suykens & Vandewalle 1999): min ½wᵀw + (C/2)Σe_i² subject to
    y_i(wᵀφ(x_i) + b) = 1 − e_i, y_i ∈ {−1, +1}; f(x) = Σ_i α_i y_i K(x, x_i) + b.

    Parameters
    ----------
    C, kernel, gamma, degree, coef0, solver, n_components, centers, random_state, tol, loo, options, keep_data :
        as LSSVR's (one-vs-one refactorises each pair at every update; class_weight='balanced'
        refactorises when new rows change the class weights).
    class_weight : dict, 'balanced' or None, default=None
        Multiplies the weight of each row of a class (C_i = C · class_weight[y_i] ·
        sample_weight_i), as SVC's; 'balanced': n_samples / (n_classes · count of the class).
    multi_class : {'ovr', 'ovo'}, default='ovr'
        One-vs-rest: one problem per class (labels +1 for the class, −1 for the rest), all
        on one factorisation; predict takes the largest decision value. One-vs-one: one
        problem per class pair on its rows, predicted by votes, ties going to the larger summed
        confidence (SVC's `break_ties`).

    Attributes
    ----------
    classes_ : ndarray
    dual_coef_ : ndarray of shape (n_problems, n_samples)
        (n_problems: 1 for two classes, n_classes for one-vs-rest, n_pairs for one-vs-one)
        Suykens & Vandewalle's α_i y_i per problem (binary: one problem, class classes_[1] positive).
    intercept_ : ndarray of shape (n_problems,)
    loo_decision_ : ndarray of shape (n_samples,) or (n_samples, n_classes)
        Each row's `decision_function` from the fit without it (`loo=True`).
    loo_score_ : float
        Leave-one-out accuracy (`loo=True`).

    Examples
    --------
    >>> import numpy as np
    >>> from svmkit import LSSVC
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> LSSVC(C=10.0, gamma=1.0).fit(X, [0, 0, 1, 1]).predict([[0.9, 0.2], [0.1, 0.8]]).tolist()
    [1, 0]
    """

    _constraints = {**BaseLSSVM._constraints, "multi_class": one_of("ovr", "ovo"), "class_weight": check_class_weight,
                    "options": reads("LSSVC", "device", "scheduler_address")}

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, solver="auto",
                 n_components=None, centers="uniform", random_state=None, tol=1e-6, loo=False, multi_class="ovr",
                 class_weight=None, options=None, keep_data=False):
        store_parameters(self, locals())

    _fit_dask = on_cluster.fit_lssvc

    def fit(self, X, y, sample_weight=None):
        """Fit one problem (binary), one per class (ovr) or one per pair (ovo); sample_weight
        weights each row's squared error."""
        return super().fit(X, y, sample_weight)

    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Fit on every row seen: the first call fits X (`classes`: every label the calls will
        bring, as scikit-learn's partial_fit), later ones add X's rows by bordering the factor
        of K + I/C (O(N²·m) for m rows; `loo_decision_` updated exactly)."""
        return self._partial_fit(X, y, sample_weight, classes)

    def _targets(self, X, y, sample_weight):
        """Validated X, the ±1 target columns (one, or one per class for one-vs-rest) with y;
        with `classes_`."""
        X, y = validate_Xy(self, X, y)
        labels, y_enc = encode_classes(y, "LSSVC")
        n_classes = labels.size
        classes = [1] if n_classes == 2 else range(n_classes)
        weight = None
        if sample_weight is not None or self.class_weight is not None:
            weight = row_weights(self.class_weight, labels, sample_weight, X, y_enc)
        Y = np.column_stack([np.where(y_enc == c, 1.0, -1.0) for c in classes])
        return Targets(X, (Y, y), weight, {"classes_": labels})

    def _fit_problems(self, session, Y, y):
        if not self._uses_votes():
            centres, alpha, b, loo = self._fit_targets(session, Y)
            if loo is not None:
                self.loo_decision_ = (Y - loo) if Y.shape[1] > 1 else (Y - loo)[:, 0]
                self.loo_score_ = self._loo_score(Y, loo, y)
            return centres, alpha, b
        centres, alpha, b, loo_decision = self._fit_pairs(session, np.searchsorted(self.classes_, y))
        if loo_decision is not None:
            self.loo_decision_ = ovo.ovr_decision(loo_decision, self.classes_.size)
            self.loo_score_ = float(np.mean(self._predict_from_raw(loo_decision) == y))
        return centres, alpha, b

    def _loo_score(self, Y, loo, y):
        return float(np.mean(self._predict_from_raw(Y - loo) == y))

    def _fit_pairs(self, session: FitSession, y_enc):
        """One problem per class pair on its rows; weights of rows outside a pair are 0. With
        `loo`, also each row's decision values without it: its own pairs' from their LOO
        residuals, the other pairs' from their fits (which never saw the row)."""
        pairs = class_pairs(self.classes_.size)
        n = y_enc.size
        alpha = np.zeros((n, len(pairs)))
        bs = np.zeros(len(pairs))
        loo_decision = np.empty((n, len(pairs))) if self.loo else None
        for k, (a, c) in enumerate(pairs):
            rows = np.flatnonzero((y_enc == a) | (y_enc == c))
            target = np.where(y_enc[rows] == a, 1.0, -1.0)[:, None]
            centres, coef, b, loo = self._fit_targets(session, target, rows)
            alpha[rows[centres], k] = coef[:, 0]
            bs[k] = b[0]
            if loo is not None:
                xp = session.backend.xp
                loo_decision[:, k] = to_host(self._K[:, xp.asarray(rows)] @ xp.asarray(coef[:, 0])) + b[0]
                loo_decision[rows, k] = (target - loo)[:, 0]
        return np.arange(n), alpha, bs, loo_decision

    def _uses_votes(self):
        return self.multi_class == "ovo" and self.classes_.size > 2

    def decision_function(self, X):
        """Decision values: (n,) for two classes (positive: classes_[1]), else (n, n_classes):
        one-vs-rest, each class's own; one-vs-one, each class's votes plus its pairs' summed
        decisions squashed into (−1/3, 1/3), as SVC's 'ovr' shape, so that predict is the argmax."""
        raw = self._raw_decision(X)
        if self.classes_.size == 2:
            return raw[:, 0]
        return ovo.ovr_decision(raw, self.classes_.size) if self._uses_votes() else raw

    def _predict_from_raw(self, raw):
        raw = raw.reshape(raw.shape[0], -1)
        if self.classes_.size == 2:
            return self.classes_[(raw[:, 0] > 0).astype(int)]
        if self._uses_votes():
            return self.classes_[np.argmax(ovo.ovr_decision(raw, self.classes_.size), axis=1)]
        return self.classes_[np.argmax(raw, axis=1)]
