"""Factorisations of H = K + sI for the closed-form kernel models, and conjugate gradient; they
see plain arrays only.

Kernel ridge solves (K + λI)β = y (Saunders, Gammerman & Vovk 1998; Bishop 2006, §6.1); the
least-squares SVM solves the bordered system [[0, 1ᵀ], [1, K + I/C]]·[b; α] = [0; y] (Suykens
et al. 2002, ch. 3; the classifier's of Suykens & Vandewalle 1999 is the same system on labels
±1). Both factorise one symmetric matrix H = K + sI: a Cholesky factor for one shift, or the
eigendecomposition of K, which then serves every shift at the cost of two products with its
eigenvectors. Exact leave-one-out residuals come from diag(H⁻¹)
(Cawley & Talbot 2004).
"""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.linalg as la

from svmkit._arrays import to_host
from svmkit._core import dense
from svmkit._threads import factor_threads
from svmkit.solvers.dense._lapack_nogil import lower_cholesky, lower_cholesky_inverse, lower_triangular_inverse, symmetric_eigen


class NotPositiveDefiniteError(ValueError):
    """K + sI is not positive definite: the kernel is indefinite (e.g. sigmoid) or the shift
    is too small for its rounding errors (duplicate rows with a shift near 0)."""


def not_positive_definite(shift: float, detail: str) -> NotPositiveDefiniteError:
    """The error for H = K + shift·I, `detail` saying how its factorisation failed."""
    return NotPositiveDefiniteError(
        f"the kernel matrix plus {shift:g}·I is not positive definite ({detail}): the kernel is "
        "indefinite (sigmoid, or a callable that is not a kernel) or the regularisation is too small "
        "for duplicate or nearly duplicate rows; use a positive definite kernel or more regularisation")


def _fortran_view(K: np.ndarray) -> np.ndarray:
    """The symmetric K as a Fortran-ordered array without a copy when K is C-ordered."""
    return K.T if K.flags.c_contiguous else K


def on_host(xp) -> bool:
    """Whether arrays of `xp` go to SciPy's LAPACK (in place, NumPy); else (CuPy) to the array
    module's own Cholesky and triangular solves."""
    return xp is np


def _solve_triangular(xp):
    if xp is np:
        return la.solve_triangular
    import cupyx.scipy.linalg

    return cupyx.scipy.linalg.solve_triangular


def _linalg_errors_raised(xp):
    """A context in which CuPy's linear algebra raises LinAlgError on a failed factorisation: by
    default it does not look (no device sync), and potrf leaves a finite, wrong factor behind."""
    if xp is np:
        return contextlib.nullcontext()
    import cupyx

    return cupyx.errstate(linalg="raise")


def _add_diagonal(xp, A, value: float) -> None:
    i = xp.arange(A.shape[0])
    A[i, i] += value


def _lower_factor(xp, H):
    """(L, True) with L the lower Cholesky factor of H (H overwritten on the host, without
    holding the GIL), the layout of la.cho_factor; raises la.LinAlgError, or returns None for
    non-finite pivots."""
    if on_host(xp):
        # LAPACK wants Fortran order: Hᵀ (= H) is that view of a C-ordered H, so no copy is made
        with factor_threads(H):
            factor = (lower_cholesky(_fortran_view(H)), True)
    else:
        with _linalg_errors_raised(xp):
            factor = (xp.linalg.cholesky(H), True)
    return factor if bool(xp.all(xp.isfinite(xp.diagonal(factor[0])))) else None


def _factor_solve(xp, factor, B):
    """H⁻¹B from `_lower_factor`'s (L, True). Off the host, through U = Lᵀ, the Fortran-ordered
    view of the C-ordered L, which the triangular solves take without copying it."""
    if on_host(xp):
        return la.cho_solve(factor, B, check_finite=False)
    solve, U = _solve_triangular(xp), factor[0].T
    return solve(U, solve(U, B, lower=False, trans="T"), lower=False)


class CholeskyShift:
    """H = K + sI factorised once by Cholesky (float64; LAPACK potrf in K's memory on the host,
    the array module's own on a device: `xp`)."""

    def __init__(self, K, shift: float, xp=np):
        self.xp, self.shift = xp, shift
        _add_diagonal(xp, K, shift)
        try:
            self.factor = _lower_factor(xp, K)
        except la.LinAlgError as err:
            raise not_positive_definite(shift, str(err)) from None
        if self.factor is None:
            raise not_positive_definite(shift, "non-finite pivots")

    def _live_factor(self):
        if self.factor is None:
            raise RuntimeError("the factor was overwritten by inverse_diag(): solve before it, and take it once")
        return self.factor

    def solve(self, B):
        """H⁻¹B (an array of `xp`)."""
        return _factor_solve(self.xp, self._live_factor(), self.xp.asarray(B))

    def inverse(self):
        """H⁻¹ in full (float64, an array of `xp`), the factor kept: on the host LAPACK's potri on
        a copy of L (8 bytes × N² more), the upper triangle mirrored from the lower; on a device
        by solving with the identity."""
        L = self._live_factor()[0]
        if not on_host(self.xp):
            return self.solve(self.xp.eye(L.shape[0], dtype=L.dtype))
        inverse = np.array(L, order="F")
        with factor_threads(inverse):
            info = lower_cholesky_inverse(inverse)
        if info != 0:
            raise not_positive_definite(self.shift, f"Cholesky inverse failed, LAPACK info {info}")
        for i in range(1, inverse.shape[0]):
            inverse[:i, i] = inverse[i, :i]
        return inverse

    def inverse_diag(self):
        """diag(H⁻¹) = squared column norms of L⁻¹. On the host L⁻¹ takes the factor's memory
        (8 bytes × N², not twice that): call it once, after the last `solve`."""
        L = self._live_factor()[0]
        if not on_host(self.xp):
            U = L.T
            L_inv = _solve_triangular(self.xp)(U, self.xp.eye(U.shape[0], dtype=U.dtype), lower=False, trans="T")
            return self.xp.einsum("ij,ij->j", L_inv, L_inv)
        with factor_threads(L):
            info = lower_triangular_inverse(L)
        self.factor = None
        if info != 0:
            raise not_positive_definite(self.shift, f"triangular inverse failed, LAPACK info {info}")
        return _lower_column_sq_norms(L.T)


def _lower_column_sq_norms(A: np.ndarray) -> np.ndarray:
    """Σ_{i ≥ j} L[i, j]² for each column j of the lower triangle L = Aᵀ (A's row j holds L's
    column j); what lies above L's diagonal is never read (trtri leaves the factor's other
    triangle there)."""
    out = np.empty(A.shape[0])
    dense.lower_column_sq_norms(np.ascontiguousarray(A), out)
    return out


#: The largest float32: a kernel entry beyond it has no float32 factor.
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Relative residual at which the float32-preconditioned CG stops: float64's rounding level.
MIXED_TOL = 1e-13
#: CG steps after which a float32-preconditioned solve gives way to a float64 factorisation.
MIXED_MAX_STEPS = 30


class MixedCholeskyShift:
    """H = K + sI solved to float64 accuracy through a float32 Cholesky factor (faster than
    the float64 potrf; beside the float64 K, 12 bytes × N²): conjugate gradient on H, with
    float64 products with K (kept, not overwritten), preconditioned by the float32 factor.
    That factor is the exact one of H + E, ‖E‖ ≈ 2⁻²⁴‖H‖, so the spectrum of P⁻¹H clusters at
    1 and CG reaches MIXED_TOL in a few steps. LAPACK's dsposv refines with the same factor by plain iterative
    refinement, which diverges once cond(H)·2⁻²⁴ ≳ 1 (cond ≈ N/λ ≈ 10⁷ at λ = 10⁻³, N = 10⁴);
    CG converges for any positive definite factor. When the float32 factorisation fails, or CG
    has not converged in MIXED_MAX_STEPS steps, H is factorised in float64 (in K's memory on
    the host). `xp`: the array module of K (NumPy, or CuPy on a GPU)."""

    def __init__(self, K, shift: float, xp=np):
        self.K, self.shift, self.xp = K, shift, xp
        self._double = None
        self.factor32 = None
        # entries beyond float32's range (rows weighted by 1e300) leave the factorisation to float64
        # (CuPy's max takes no `initial`: an empty K is tested apart)
        if (float(xp.abs(K).max()) if K.size else 0.0) + abs(shift) >= FLOAT32_MAX:
            return
        H32 = K.astype(np.float32)
        _add_diagonal(xp, H32, shift)
        try:
            self.factor32 = _lower_factor(xp, H32)
        except la.LinAlgError:
            pass

    def _matvec(self, P):
        """H·P; on the host by symv on K's lower triangle (half the traffic of a general product)."""
        if not on_host(self.xp):
            return self.K @ P + self.shift * P
        KF = _fortran_view(self.K)
        out = np.empty_like(P)
        for j in range(P.shape[1]):
            out[:, j] = la.blas.dsymv(1.0, KF, P[:, j], lower=1)
        return out + self.shift * P

    def _precondition(self, R):
        """P⁻¹R through the float32 factor, each column scaled to at most 1 in float32, where a
        residual of large targets would overflow and one of tiny targets underflow."""
        scale = self.xp.max(self.xp.abs(R), axis=0)
        scale = self.xp.where(scale > 0, scale, 1.0)
        return self._solve32((R / scale).astype(np.float32)).astype(np.float64) * scale

    def _solve32(self, R):
        """P⁻¹R for float32 R through the float32 factor."""
        return _factor_solve(self.xp, self.factor32, R)

    def solve(self, B):
        """H⁻¹B (an array of `xp`)."""
        B = self.xp.asarray(B, dtype=np.float64)
        if self._double is None and self.factor32 is not None:
            X, converged = conjugate_gradient(self._matvec, B, self._precondition, MIXED_TOL, MIXED_MAX_STEPS,
                                              xp=self.xp)
            if converged and bool(self.xp.all(self.xp.isfinite(X))):
                return X
        return self.double().solve(B)

    def double(self) -> CholeskyShift:
        """The float64 factorisation, made once (in the memory of `_kernel()`)."""
        if self._double is None:
            self.factor32 = None
            self._double = CholeskyShift(self._kernel(), self.shift, self.xp)
        return self._double

    def _kernel(self):
        """K, handed over to the float64 factorisation (which overwrites it)."""
        K, self.K = self.K, None
        return K


class EigenShift:
    """K = V diag(w) Vᵀ factorised once (LAPACK syevd on the host, the array module's own
    `eigh` on a device: `xp`); `at(s)` gives H = K + sI for any shift s at the cost of products
    with V. A shift that leaves an eigenvalue of H at or below 1e-12·max|w| (an indefinite
    kernel, or a singular one at s = 0) is refused."""

    def __init__(self, K, xp=np):
        self.xp = xp
        if on_host(xp):
            with factor_threads(K):
                self.w, self.V = symmetric_eigen(_fortran_view(K))
        else:
            self.w, self.V = xp.linalg.eigh(K)
        self._V2 = self.V * self.V
        self._scale = max(float(xp.max(xp.abs(self.w))), np.finfo(float).tiny) if self.w.size else 1.0

    def at(self, shift: float) -> "ShiftedEigen":
        values = self.w + shift
        if values.size and float(self.xp.min(values)) <= 1e-12 * self._scale:
            raise not_positive_definite(shift, f"smallest eigenvalue {float(self.xp.min(values)):.3g}")
        return ShiftedEigen(self, 1.0 / values)


class ShiftedEigen:
    """(K + sI)⁻¹ as V diag(1/(w + s)) Vᵀ, with CholeskyShift's `solve` and `inverse_diag`."""

    def __init__(self, eigen: EigenShift, inverse_values):
        self.eigen = eigen
        self.inv = inverse_values

    def solve(self, B):
        """H⁻¹B = V diag(1/(w + s)) VᵀB (an array of the factorisation's `xp`)."""
        VtB = self.eigen.V.T @ self.eigen.xp.asarray(B)
        return self.eigen.V @ (self.inv[:, None] * VtB if VtB.ndim == 2 else self.inv * VtB)

    def inverse(self):
        """H⁻¹ = V diag(1/(w + s)) Vᵀ in full."""
        V = self.eigen.V
        return (V * self.inv) @ V.T

    def inverse_diag(self):
        """diag(H⁻¹) = Σ_j V_ij² / (w_j + s)."""
        return self.eigen._V2 @ self.inv


#: Shifts from which one eigendecomposition of K serves them all more cheaply than a Cholesky
#: factorisation and triangular inverse per shift: syevd costs about as many of those.
EIGEN_MIN_SHIFTS = 8


def shifted_scores(K, shifts, score, xp=np):
    """score(H) for H = K + sI factorised for each s of `shifts`, in order (H with `solve(B)`
    and `inverse_diag()`, arrays of `xp`): on the host one eigendecomposition of K for
    EIGEN_MIN_SHIFTS shifts or more, else (and always on a device, where syevd costs tens of
    potrf) a Cholesky factor per shift,
    each of a copy of K but the last (K is overwritten either way). A shift at which H is not
    positive definite gives a NotPositiveDefiniteError in place of its score, and the other
    shifts go on. The two routes refuse at different margins: the
    eigendecomposition an eigenvalue of H at or below 1e-12 of K's largest, Cholesky a pivot
    that is not positive."""
    shifts = list(shifts)
    eigen = EigenShift(K) if len(shifts) >= EIGEN_MIN_SHIFTS and on_host(xp) else None
    for i, shift in enumerate(shifts):
        try:
            factor = eigen.at(shift) if eigen is not None else \
                CholeskyShift(K if i == len(shifts) - 1 else K.copy(), shift, xp)
            result = score(factor)
        except NotPositiveDefiniteError as err:
            result = NotPositiveDefiniteError(str(err))  # not `err`: its traceback holds H
        yield result


def bordered_solution(solved: np.ndarray):
    """b and α of [[0, 1ᵀ], [1, H]]·[b; α] = [0; y] for each column y of Y, through H only (the
    Schur complement of the border), from `solved` = H⁻¹[1, Y]: η = H⁻¹1, ν = H⁻¹y,
    b = 1ᵀν / 1ᵀη, α = ν − bη. Returns (α (n × k), b (k), η)."""
    eta, nu = solved[:, 0], solved[:, 1:]
    b = nu.sum(axis=0) / eta.sum()
    return nu - eta[:, None] * b, b, eta


def bordered_loo(alpha: np.ndarray, eta: np.ndarray, inverse_diag: np.ndarray) -> np.ndarray:
    """Leave-one-out residuals y_i − f₋ᵢ(x_i) = α_i / (M⁻¹)_ii of the bordered LS-SVM system M
    (α: n × k), whose α-block of the inverse is H⁻¹ − ηηᵀ/1ᵀη (Cawley & Talbot 2004)."""
    return alpha / (inverse_diag - eta * eta / eta.sum())[:, None]


def leave_one_out_blocks(factor, s=None, bordered: bool = False):
    """(E, e) that give each leave-one-out fit's prediction, f₋ᵢ(x) = f(x) − (Σ_j K(x, x_j)E_ji + e_i)·r_i
    with r_i the leave-one-out residual: for M θ = t, the system without row and column i is
    solved by θ − M⁻¹e_i θ_i / (M⁻¹)_ii (Cawley & Talbot 2004), so E is M⁻¹'s coefficient block
    and e its border row. M = H with H⁻¹ = S·`factor`⁻¹·S (S = diag(s), the identity for None),
    e = 0; or bordered, [[0, 1ᵀ], [1, H]]: E = H⁻¹ − ηηᵀ/1ᵀη, e = η/1ᵀη, η = H⁻¹1. Call it before
    `inverse_diag`, which takes the factor's memory; E holds 8 bytes × N², twice that while formed
    (the factor beside it)."""
    inverse = to_host(factor.inverse())
    n = inverse.shape[0]
    if s is not None:
        inverse *= s[:, None]
        inverse *= s[None, :]
    if not bordered:
        return inverse, np.zeros(n)
    eta = inverse.sum(axis=1)
    border = eta / eta.sum()
    # by blocks of rows: an N × N outer product beside E would be a third N × N array
    step = max(1, (1 << 22) // max(n, 1))
    for lo in range(0, n, step):
        inverse[lo:lo + step] -= np.outer(border[lo:lo + step], eta)
    return inverse, border


def _ratio(xp, a, b):
    """a / b where b > 0, else 0."""
    positive = b > 0
    return xp.where(positive, a / xp.where(positive, b, 1.0), 0.0)


def conjugate_gradient(matvec, b, precondition=None, tol: float = 1e-10, max_iter: int = 1000, xp=np):
    """x with A x = b for symmetric positive definite A given by `matvec`, preconditioned by
    `precondition(r)` ≈ A⁻¹r; b (an array of `xp`) may hold several right-hand sides as
    columns, all iterated together. Stops when every ‖r‖ ≤ tol·‖b‖ or after `max_iter` steps.
    Returns (x, converged): whether every ‖r‖ ≤ tol·‖b‖ (a NaN residual never is)."""
    B = b.reshape(b.shape[0], -1)
    x = xp.zeros_like(B)
    r = B.copy()
    z = precondition(r) if precondition is not None else r
    p = z.copy()
    rz = xp.einsum("ij,ij->j", r, z)
    target = tol * xp.linalg.norm(B, axis=0)
    steps = 0
    while not (converged := bool(xp.all(xp.linalg.norm(r, axis=0) <= target))) and steps < max_iter:
        Ap = matvec(p).reshape(p.shape)
        step = _ratio(xp, rz, xp.einsum("ij,ij->j", p, Ap))
        x += step * p
        r -= step * Ap
        z = precondition(r) if precondition is not None else r
        rz_new = xp.einsum("ij,ij->j", r, z)
        p = z + _ratio(xp, rz_new, rz) * p
        rz = rz_new
        steps += 1
    return x.reshape(b.shape), converged
