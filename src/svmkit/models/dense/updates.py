"""`partial_fit` and `forget` for the dense kernel models: the training rows kept
(`models.retained`), every update a fit on all rows kept whose expensive part starts from the
previous fit's. The closed-form models (kernel ridge, LS-SVM) keep the Cholesky factor of
K + sI and border it with the new rows or remove the forgotten ones from it (at the next
update; the solution without them comes at once from the inverse's Schur complement)
(`solvers.dense.updates.UpdatableCholesky`, O(N²·m) for m rows, with the exact leave-one-out
terms); kernel logistic regression starts Newton from the previous β (new rows at 0, forgotten
rows dropped). Every update is a fit on the rows it leaves, with the same parameters: γ given
as 'scale' is resolved on those rows, as `fit` would, and a kernel that changes with it is
factorised anew."""

from __future__ import annotations

import numpy as np

from svmkit._validation import require_in_memory
from svmkit.models.expansion import open_session
from svmkit.models.retained import RETAINED, appended, check_labels, remaining, retained
from svmkit.solvers.dense.updates import UpdatableCholesky

class UpdatableDense:
    """`partial_fit` and `forget` over a dense model's `_fit_session`; subclasses say how the
    previous fit starts the next (`_grow`, `_shrink`)."""

    def fit(self, X, y, sample_weight=None):
        self._drop_update_state()
        for name in RETAINED:
            vars(self).pop(name, None)
        if not self.keep_data:
            return super().fit(X, y, sample_weight)
        return self._fit_keeping(X, y, sample_weight)

    def _drop_update_state(self):
        for name in ("_update", "_start", "_factor_state", "_pending_factor", "_partial_classes"):
            vars(self).pop(name, None)

    def _fit_keeping(self, X, y, sample_weight):
        """Fit in memory and keep the validated rows, y as given, and the weights."""
        require_in_memory(X, f"{type(self).__name__} keeps its training rows in memory only: call .compute() on "
                             "the Dask collection first, or set keep_data=False")
        session = open_session(self, X, y, sample_weight)
        self._refit(session, retained(session.X, np.asarray(y), sample_weight))
        return self

    def _partial_fit(self, X, y, sample_weight, classes):
        """Fit on the rows seen so far and X: the first call fits X and keeps its rows, a later
        call adds X's rows and returns the model fitted on all of them."""
        if "shape_fit_" not in vars(self):
            self._drop_update_state()
            self._first_classes(y, classes)
            return self._fit_keeping(X, y, sample_weight)
        self._check_labels(y)
        rows, targets, weight = appended(self, X, y, sample_weight)
        n_old = self.retained_X_.shape[0]
        session = self._update_session(rows, targets, weight)
        self._grow(session, n_old)
        return self._refit(session, retained(rows, targets, weight))

    def forget(self, indices):
        """Remove the training rows `indices` (positions in the order seen): the model becomes
        the fit on the remaining rows."""
        keep = remaining(self, indices)
        rows, targets, weight = self.retained_X_[keep], self.retained_y_[keep], self.retained_weight_[keep]
        session = self._update_session(rows, targets, weight)
        self._shrink(session, keep)
        return self._refit(session, retained(rows, targets, weight))

    def _first_classes(self, y, classes):
        """Check the first call's labels against `classes=` (a classifier's), and keep them."""
        if classes is not None:
            vars(self)["_partial_classes"] = np.unique(np.asarray(classes))
            self._check_labels(y)

    def _check_labels(self, y):
        """A classifier's label outside the first call's classes (or `classes=` given there) is
        refused."""
        check_labels(vars(self).get("_partial_classes", getattr(self, "classes_", None)), y)

    def _update_session(self, rows, targets, weight):
        """The fit session of an update: `fit`'s on the rows kept (γ resolved on them)."""
        return open_session(self, rows, targets, weight)

    def _refit(self, session, kept):
        vars(self)["_update"] = True
        try:
            self._fit_session(session)
        finally:
            vars(self).pop("_update", None)
            vars(self).pop("_pending_factor", None)
            vars(self).pop("_start", None)
        vars(self).update(kept)
        return self

    def _keeps_state(self) -> bool:
        return self.keep_data or vars(self).get("_update", False)

    def _grow(self, session, n_old):
        raise NotImplementedError

    def _shrink(self, session, keep):
        raise NotImplementedError


class UpdatableClosedForm(UpdatableDense):
    """The closed-form models: their Cholesky factor of H = SKS + sI (S = diag(√w)) is kept
    with the row scale S and the kernel it was made for, bordered by `partial_fit`'s rows and
    downdated by `forget`; a change of scale on the rows kept (class_weight='balanced' with new
    rows), of shift or of the kernel (gamma='scale' resolved on other rows) refactorises."""

    def _kept_factor(self, session, solver, shift, scale):
        """The factorisation of H for the fit: the updated one when it is still H's, else a new
        float64 Cholesky factor (kept when the model keeps its state)."""
        if not self._keeps_state():
            return session.backend.factorise(solver, session.kernel, session.Xk, shift, scale, exact=self.loo)
        if solver != "cholesky" or session.backend.xp is not np:
            raise ValueError("partial_fit, forget and keep_data update the exact float64 Cholesky factor on the "
                             f"host: set solver='cholesky' or 'auto' and device='cpu' (got solver={solver!r})")
        s = self._scale_of(session)
        key = (*self._kernel_key(session), shift)
        pending = vars(self).pop("_pending_factor", None)
        if pending is None or pending[1] != key or not np.array_equal(pending[2], s) or \
                (self.loo and pending[0].diag is None):
            rows = session.backend.lower_rows(session.kernel, session.Xk, scale)
            pending = (UpdatableCholesky.from_rows(s.size, rows, shift, self.loo), key, s)
        vars(self)["_factor_state"] = pending
        return pending[0]

    def _kernel_key(self, session):
        """What the kernel of `session` is made of: a factor of another kernel is not H's."""
        return repr(self.kernel), session.fitted["gamma_"], self.degree, self.coef0

    @staticmethod
    def _scale_of(session):
        n = session.X.shape[0]
        return np.ones(n) if session.weight is None else np.sqrt(np.asarray(session.weight, dtype=np.float64))

    def _grow(self, session, n_old):
        kept = vars(self).get("_factor_state")
        s = self._scale_of(session)
        if kept is None or kept[1][:-1] != self._kernel_key(session) or not np.array_equal(kept[2], s[:n_old]):
            return
        factor, key, _ = kept
        block = session.kernel.block(session.Xk[n_old:], session.Xk)
        block *= s[n_old:, None]
        block *= s[None, :]
        # the transpose of the row-major block is column-major: the solve copies it as it lies
        factor.grow(block[:, :n_old].T, np.ascontiguousarray(block[:, n_old:]))
        vars(self)["_pending_factor"] = (factor, key, s)
        del vars(self)["_factor_state"]

    def _shrink(self, session, keep):
        kept = vars(self).pop("_factor_state", None)
        if kept is None or kept[1][:-1] != self._kernel_key(session) or \
                not np.array_equal(kept[2][keep], self._scale_of(session)):
            return
        kept[0].shrink(keep)
        vars(self)["_pending_factor"] = (kept[0], kept[1], kept[2][keep])


class UpdatableNewton(UpdatableDense):
    """Kernel logistic regression: Newton starts from the previous (β, b), new rows at β = 0,
    forgotten rows' β dropped (any start reaches the one optimum of the convex J)."""

    def _grow(self, session, n_old):
        if self._same_classes(session):
            beta = np.vstack([self._dual_coef_.T, np.zeros((session.X.shape[0] - n_old, self._dual_coef_.shape[0]))])
            vars(self)["_start"] = (beta, self._intercept_.copy())

    def _shrink(self, session, keep):
        if self._same_classes(session):
            vars(self)["_start"] = (self._dual_coef_.T[keep], self._intercept_.copy())

    def _same_classes(self, session):
        """Whether the previous β is a start: over every row (not Nyström centres), same classes."""
        return self.solver == "newton" and np.array_equal(session.fitted["classes_"], self.classes_)
