"""A Cholesky factor of H = K + sI kept for updates: rows added by bordering, rows removed by a
blocked Householder rank update of the rows after them, each in O(N²·m) for m rows, and
diag(H⁻¹) (the exact leave-one-out residuals' denominators, Cawley & Talbot 2004) carried along
by the block inverse (Golub & Van Loan 2013, §4.2 and §6.5.4; the incremental LS-SVM of
Cauwenberghs & Poggio 2000 borders the same way). Plain NumPy arrays on the host, in float64."""

from __future__ import annotations

import numpy as np
import scipy.linalg as la

from svmkit._threads import one_blas_thread
from svmkit.solvers.dense.factorisations import not_positive_definite

#: Spare order a new buffer of the factor gets, as a part of the order needed: room for rows
#: added later without a new allocation.
GROW_ROOM = 0.1
#: Columns of the factor rotated together when rows are removed (a block of at least the
#: rows removed keeps the Householder products GEMM-sized).
ROTATION_BLOCK = 64


def _lower_cholesky(H: np.ndarray, shift: float) -> np.ndarray:
    try:
        L = la.cholesky(H, lower=True, overwrite_a=True, check_finite=False)
    except la.LinAlgError as err:
        raise not_positive_definite(shift, str(err)) from None
    if not np.all(np.isfinite(np.diagonal(L))):
        raise not_positive_definite(shift, "non-finite pivots")
    return L


def _inverse_diag(L: np.ndarray) -> np.ndarray:
    """diag(H⁻¹) = squared column norms of L⁻¹, H = LLᵀ (N³/3, at the first factorisation only)."""
    L_inv = la.solve_triangular(L, np.eye(L.shape[0]), lower=True, check_finite=False)
    return np.einsum("ij,ij->j", L_inv, L_inv)


class UpdatableCholesky:
    """H = K + sI (K a float64 matrix, overwritten) as its lower Cholesky factor L, with
    `solve` and, when `with_inverse_diag`, `inverse_diag` (kept exact through `grow` and
    `shrink`, never recomputed)."""

    def __init__(self, K: np.ndarray, shift: float, with_inverse_diag: bool):
        self.shift = shift
        K[np.diag_indices_from(K)] += shift
        self.L = np.asfortranarray(_lower_cholesky(K, shift))
        self.diag = _inverse_diag(self.L) if with_inverse_diag else None
        # L is a Fortran-ordered view of the start of this buffer, which updates reuse: a fresh
        # N × N array costs a page fault per 4 kB, as long as the update's arithmetic
        self._flat = self.L.reshape(-1, order="F")
        self._reshaped(self.n, self.n, room=True)

    def _reshaped(self, k: int, old: int, room: bool = False):
        """L as a k × k view of the buffer, its first `old` columns' first `old` rows moved
        from the old × old layout (last column first, so that nothing is overwritten before it
        is read); the buffer replaced by one with GROW_ROOM when too small, or when `room`."""
        flat = self._flat
        if room or flat.size < k * k:
            room = k + max(k - old, int(GROW_ROOM * k))
            flat = np.empty(room * room)
        for j in range(old - 1, -1, -1):
            flat[j * k:j * k + old] = self._flat[j * old:j * old + old]
        self._flat = flat
        self.L = flat[:k * k].reshape((k, k), order="F")

    @property
    def n(self) -> int:
        return self.L.shape[0]

    def solve(self, B):
        """H⁻¹B."""
        return la.cho_solve((self.L, True), np.asarray(B, dtype=np.float64), check_finite=False)

    def inverse_diag(self):
        """diag(H⁻¹) (a copy)."""
        if self.diag is None:
            raise RuntimeError("this factor was made without diag(H⁻¹)")
        return self.diag.copy()

    def grow(self, B: np.ndarray, D: np.ndarray) -> None:
        """Border H with m rows: H' = [[H, B], [Bᵀ, D + sI]] (B: n × m, D: m × m, overwritten).
        L' = [[L, 0], [Cᵀ, L_S]] with C = L⁻¹B and L_S the factor of the Schur complement
        S = D + sI − CᵀC; diag(H'⁻¹) = [diag(H⁻¹) + rowsums((L⁻ᵀC L_S⁻ᵀ)²), diag(S⁻¹)].
        Two triangular solves with m columns: 2N²m."""
        n, m = self.n, D.shape[0]
        C = la.solve_triangular(self.L, B, lower=True, check_finite=False)
        D[np.diag_indices_from(D)] += self.shift
        D -= C.T @ C
        L_S = _lower_cholesky(D, self.shift)
        if self.diag is not None:
            # H'⁻¹'s leading block is H⁻¹ + Z S⁻¹ Zᵀ, Z = H⁻¹B = L⁻ᵀC (Schur complement inverse)
            Z = la.solve_triangular(self.L, C, lower=True, trans="T", check_finite=False)
            W = la.solve_triangular(L_S, Z.T, lower=True, check_finite=False)
            S_inv = la.solve_triangular(L_S, np.eye(m), lower=True, check_finite=False)
            self.diag = np.concatenate([self.diag + np.einsum("ij,ij->j", W, W),
                                        np.einsum("ij,ij->j", S_inv, S_inv)])
        self._reshaped(n + m, n)
        self.L[:n, n:] = 0.0
        self.L[n:, :n] = C.T
        self.L[n:, n:] = L_S

    def shrink(self, keep: np.ndarray) -> None:
        """Remove the rows and columns of H where `keep` is False. diag first: (H_kk)⁻¹ =
        (H⁻¹)_kk − (H⁻¹)_kr ((H⁻¹)_rr)⁻¹ (H⁻¹)_rk, with (H⁻¹)_{·r} by two triangular solves
        (2N²m). Then the factor: the kept rows of L, L_k, satisfy H_kk = L_k L_kᵀ; their
        columns of removed rows W leave L_k's other columns lower triangular T, so
        H_kk = TTᵀ + WWᵀ, a rank-m update, made by Householder reflections applied block by
        block of ROTATION_BLOCK columns to [T W] from the first removed row on (≈ 2N²m)."""
        removed = np.flatnonzero(~keep)
        if self.diag is not None:
            E = np.zeros((self.n, removed.size))
            E[removed, np.arange(removed.size)] = 1.0
            G = self.solve(E)
            R = _lower_cholesky(G[removed].copy(), self.shift)
            V = la.solve_triangular(R, G[keep].T, lower=True, check_finite=False)
            self.diag = self.diag[keep] - np.einsum("ij,ij->j", V, V)
        first = int(removed[0])
        W = self.L[:, removed][keep[first:].nonzero()[0] + first]
        kept, n = np.flatnonzero(keep), self.n
        k = kept.size
        # in place, column by column from the first: column j's entries move to lower addresses
        for j, col in enumerate(kept):
            self._flat[j * k:j * k + k] = self._flat[col * n + kept]
        self.L = self._flat[:k * k].reshape((k, k), order="F")
        _rank_update(self.L[first:, first:], W)


def _rank_update(T: np.ndarray, W: np.ndarray) -> None:
    """Overwrite the lower triangular T (p × p) with the factor of TTᵀ + WWᵀ (W: p × m,
    overwritten): for each block of b columns, the QR of [T_jj W_j]ᵀ gives the orthogonal Q
    with [T_jj W_j]Q = [R_jjᵀ 0], applied to the rows below; [T W][T W]ᵀ is unchanged."""
    p, m = W.shape
    b = max(ROTATION_BLOCK, m)
    for lo in range(0, p, b):
        hi = min(p, lo + b)
        A = np.hstack([T[lo:, lo:hi], W[lo:]])
        # a QR this small is several times slower on threaded BLAS beside a busy core
        with one_blas_thread():
            Q, R = la.qr(A[:hi - lo].T, mode="full", check_finite=False)
        # a positive diagonal: the Cholesky factor is the one with it
        signs = np.sign(np.diagonal(R))
        signs[signs == 0] = 1.0
        Q[:, :hi - lo] *= signs
        A = A @ Q
        T[lo:, lo:hi] = A[:, :hi - lo]
        W[lo:] = A[:, hi - lo:]
