"""A Cholesky factor of H = K + sI kept for updates: rows added by bordering, rows removed by a
blocked Householder rank update of the rows after them (deferred to the next update: the
solution without them comes first from the Schur complement of the inverse), each in O(N²·m)
for m rows, and diag(H⁻¹) (the exact leave-one-out residuals' denominators, Cawley & Talbot
2004) carried along by the block inverse (Golub & Van Loan 2013, §4.2 and §6.5.4; the
incremental LS-SVM of Cauwenberghs & Poggio 2000 borders the same way). Plain NumPy arrays on
the host, in float64; the factor lives in a larger Fortran-ordered buffer, which LAPACK and
BLAS (through `_lapack_nogil`) address by its leading dimension, so that no update moves it."""

from __future__ import annotations

import numpy as np
import scipy.linalg as la

from svmkit._threads import factor_threads
from svmkit.solvers.dense._lapack_nogil import (apply_block_reflector, lower_cholesky, lower_solve,
                                                lower_triangular_inverse)
from svmkit.solvers.dense.factorisations import not_positive_definite

#: Spare order a new buffer of the factor gets, as a part of the order needed: room for rows
#: added later without a new buffer.
GROW_ROOM = 0.1
#: Columns of the factor rotated together when rows are removed (one block reflector each).
ROTATION_BLOCK = 64
#: Columns of L⁻¹E (E unit columns) solved together from their first nonzero row: fewer
#: columns solve less of L each, more keep the solve matrix-sized (32 was the fastest of 16 to
#: 100 on 100 rows of 10,100).
UNIT_SOLVE_BLOCK = 32
#: Kernel entries per block of rows read into the factor's buffer (float64: 16 MB).
ROW_BLOCK_ELEMENTS = 1 << 21


def _lower_cholesky(H: np.ndarray, shift: float) -> np.ndarray:
    try:
        L = la.cholesky(H, lower=True, overwrite_a=True, check_finite=False)
    except la.LinAlgError as err:
        raise not_positive_definite(shift, str(err)) from None
    if not np.all(np.isfinite(np.diagonal(L))):
        raise not_positive_definite(shift, "non-finite pivots")
    return L


def _solve(L: np.ndarray, B: np.ndarray, trans: bool = False) -> np.ndarray:
    """L⁻¹B (L⁻ᵀB with `trans`) as a new array; L may be a block of a larger array."""
    X = np.array(B, dtype=np.float64, order="F", copy=True).reshape(B.shape[0], -1, order="F")
    lower_solve(L, X, trans=trans)
    return X.reshape(B.shape, order="F")


def _inverse_diag(L: np.ndarray) -> np.ndarray:
    """diag(H⁻¹) = squared column norms of L⁻¹, H = LLᵀ (N³/3, at the first factorisation only;
    L's strict upper triangle zero)."""
    L_inv = np.array(L, order="F")
    if lower_triangular_inverse(L_inv) != 0:
        raise np.linalg.LinAlgError("singular factor")
    return np.einsum("ij,ij->j", L_inv, L_inv)


class UpdatableCholesky:
    """H = K + sI (K a float64 matrix, read) as its lower Cholesky factor L, with `solve` and,
    when `with_inverse_diag`, `inverse_diag` (kept exact through `grow` and `shrink`, never
    recomputed). The last right-hand side solved is carried through `grow` and `shrink`:
    solving it again with the rows added (or without the rows removed) costs one triangular
    solve. `shrink` defers the downdate of L to the next use of L (`grow`, a further `shrink`,
    `L`): until then H⁻¹ of the remaining rows is that of the Schur complement of the inverse."""

    def __init__(self, K: np.ndarray, shift: float, with_inverse_diag: bool):
        self._factorise(K.shape[0], lambda lo, hi: K[lo:hi, lo:], shift, with_inverse_diag)

    @classmethod
    def from_rows(cls, n: int, rows, shift: float, with_inverse_diag: bool) -> "UpdatableCholesky":
        """The factor of K + sI from K's rows: rows(lo, hi) → K[lo:hi, lo:] (each row's entries
        from its diagonal on read), never the N × N kernel beside the factor."""
        factor = cls.__new__(cls)
        factor._factorise(n, rows, shift, with_inverse_diag)
        return factor

    def _factorise(self, n: int, rows, shift: float, with_inverse_diag: bool) -> None:
        self.shift = shift
        # zeros that the system maps in when first written: the factor's upper triangle is zero
        # without a pass over it
        self._buf = np.zeros((n + int(GROW_ROOM * n),) * 2, order="F")
        L = self._buf[:n, :n]
        step = max(1, ROW_BLOCK_ELEMENTS // max(n, 1))
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            # K's rows lo … hi − 1 from the diagonal on are L's columns from the diagonal down
            L[lo:, lo:hi] = np.asarray(rows(lo, hi), dtype=np.float64).T
            block = L[lo:hi, lo:hi]
            block[np.triu_indices(hi - lo, 1)] = 0.0
        L[np.diag_indices(n)] += shift
        try:
            with factor_threads(L):
                lower_cholesky(L)
        except la.LinAlgError as err:
            raise not_positive_definite(shift, str(err)) from None
        if not np.all(np.isfinite(np.diagonal(L))):
            raise not_positive_definite(shift, "non-finite pivots")
        self._L = L
        # the room written once now (a tenth of the buffer): rows added later would otherwise
        # fault in a page for each column they extend
        self._buf[n:] = 0.0
        self._buf[:n, n:] = 0.0
        self.diag = _inverse_diag(L) if with_inverse_diag else None
        # (b, L⁻¹b or None, H⁻¹b) of the last right-hand side b solved: L⁻¹b stays valid while
        # L starts with the factor it was solved on (rows added after it)
        self._solved = None
        # rows removed from H but not yet from L: (keep, V = L⁻¹E_r, R with RRᵀ = VᵀV = (H⁻¹)_rr)
        self._removal = None

    @property
    def L(self) -> np.ndarray:
        """The lower Cholesky factor of H (a removal still pending made first), a block of the
        buffer: its strict upper triangle is zero."""
        self._downdate()
        return self._L

    @property
    def n(self) -> int:
        return self._L.shape[0] if self._removal is None else int(np.count_nonzero(self._removal[0]))

    def solve(self, B):
        """H⁻¹B."""
        B = np.asarray(B, dtype=np.float64)
        carried = self._carried(B)
        if carried is None:
            carried = self._solved_anew(B)
        self._solved = (B.copy(), *carried)
        return carried[1].copy()

    def _solved_anew(self, B):
        """(L⁻¹B or None, H⁻¹B) by triangular solves with L; with a removal pending, H⁻¹ of the
        remaining rows from that of all rows (`_without_removed`)."""
        if self._removal is None:
            w = _solve(self._L, B)
            return w, _solve(self._L, w, trans=True)
        keep = self._removal[0]
        padded = np.zeros((keep.size,) + B.shape[1:])
        padded[keep] = B
        return None, self._without_removed(_solve(self._L, _solve(self._L, padded), trans=True))

    def _carried(self, B):
        """(L⁻¹B, H⁻¹B) from the last solve when B is its right-hand side with rows added since:
        L = [[L₁, 0], [C, L₂]] gives L⁻¹B = [w; L₂⁻¹(B₂ − Cw)], w = L₁⁻¹B₁, then one solve with
        Lᵀ. None when B is not such a right-hand side."""
        if self._solved is None:
            return None
        b, w, x = self._solved
        p = b.shape[0]
        if B.shape[1:] != b.shape[1:] or B.shape[0] < p or not np.array_equal(B[:p], b):
            return None
        if B.shape[0] == p or w is None:
            return (w, x) if B.shape[0] == p else None
        L = self._L
        w = np.concatenate([w, _solve(L[p:, p:], B[p:] - L[p:, :p] @ w)])
        return w, _solve(L, w, trans=True)

    def _without_removed(self, u: np.ndarray) -> np.ndarray:
        """(H_kk)⁻¹b_k from u = H⁻¹b (any b_r), k the rows kept and r those removed:
        (H_kk)⁻¹ = (H⁻¹)_kk − (H⁻¹)_kr ((H⁻¹)_rr)⁻¹ (H⁻¹)_rk (the Schur complement of the
        inverse), so (H_kk)⁻¹b_k = (u − G (G_rr)⁻¹ u_r)_k, G = H⁻¹E_r = L⁻ᵀV; one solve with Lᵀ."""
        keep, V, R = self._removal
        c = la.cho_solve((R, True), u[~keep], check_finite=False)
        return (u - _solve(self._L, V @ c, trans=True))[keep]

    def inverse(self):
        """H⁻¹ in full, by solving with the identity; not kept as the last solve, which the next
        update's solve of the targets carries over."""
        return self._solved_anew(np.eye(self.n))[1]

    def inverse_diag(self):
        """diag(H⁻¹) (a copy)."""
        if self.diag is None:
            raise RuntimeError("this factor was made without diag(H⁻¹)")
        return self.diag.copy()

    def grow(self, B: np.ndarray, D: np.ndarray) -> None:
        """Border H with m rows: H' = [[H, B], [Bᵀ, D + sI]] (B: n × m, D: m × m, D overwritten).
        L' = [[L, 0], [Cᵀ, L_S]] with C = L⁻¹B and L_S the factor of the Schur complement
        S = D + sI − CᵀC; diag(H'⁻¹) = [diag(H⁻¹) + rowsums((L⁻ᵀC L_S⁻ᵀ)²), diag(S⁻¹)].
        One triangular solve with m columns (N²m), one more with diag."""
        self._downdate()
        n, m = self.n, D.shape[0]
        with factor_threads(self._L):
            C = _solve(self._L, B)
            Z = _solve(self._L, C, trans=True) if self.diag is not None else None
        D[np.diag_indices_from(D)] += self.shift
        # SciPy's BLAS throughout: NumPy's, a second OpenBLAS, waits for the first's threads
        D -= la.blas.dgemm(1.0, C, C, trans_a=1)
        L_S = _lower_cholesky(D, self.shift)
        if self.diag is not None:
            # H'⁻¹'s leading block is H⁻¹ + Z S⁻¹ Zᵀ, Z = H⁻¹B = L⁻ᵀC (Schur complement inverse)
            W = la.solve_triangular(L_S, Z.T, lower=True, check_finite=False)
            S_inv = la.solve_triangular(L_S, np.eye(m), lower=True, check_finite=False)
            self.diag = np.concatenate([self.diag + np.einsum("ij,ij->j", W, W),
                                        np.einsum("ij,ij->j", S_inv, S_inv)])
        if n + m > self._buf.shape[0]:
            buf = np.zeros((n + m + max(m, int(GROW_ROOM * (n + m))),) * 2, order="F")
            buf[:n, :n] = self._L
            buf[n:] = 0.0
            self._buf = buf
        self._L = self._buf[:n + m, :n + m]
        self._L[:n, n:] = 0.0
        self._L[n:, :n] = C.T
        self._L[n:, n:] = L_S

    def shrink(self, keep: np.ndarray) -> None:
        """Remove the rows and columns of H where `keep` is False: V = L⁻¹E_r (E_r the removed
        rows' unit columns; N²m/3 on average, V being zero above each removed row), then
        (H⁻¹)_rr = VᵀV = RRᵀ; diag((H_kk)⁻¹) = diag(H⁻¹)_k − rowsums((G_kr R⁻ᵀ)²) with
        G = L⁻ᵀV (one more N²m, with diag only), and the last solution by `_without_removed`.
        L itself is downdated when next needed (`_downdate`)."""
        self._downdate()
        removed = np.flatnonzero(~keep)
        with factor_threads(self._L):
            V = _unit_solve(self._L, removed)
            G = _solve(self._L, V, trans=True) if self.diag is not None else None
        R = _lower_cholesky(la.blas.dsyrk(1.0, V, trans=1, lower=1), self.shift)
        if self.diag is not None:
            W = la.solve_triangular(R, G[keep].T, lower=True, check_finite=False)
            self.diag = self.diag[keep] - np.einsum("ij,ij->j", W, W)
        self._removal = (keep, V, R)
        solved, self._solved = self._solved, None
        if solved is not None and solved[0].shape[0] == keep.size:
            self._solved = (solved[0][keep], None, self._without_removed(solved[2]))

    def _downdate(self) -> None:
        """Take the pending removal's rows out of L: the kept rows of L, L_k, satisfy
        H_kk = L_k L_kᵀ; their columns of removed rows W leave L_k's other columns lower
        triangular T, so H_kk = TTᵀ + WWᵀ, a rank-m update (`_rank_update`, ≈ 2N²m) from the
        first removed row on, after the kept rows and columns are moved into place
        (`_compact`)."""
        if self._removal is None:
            return
        keep = self._removal[0]
        self._removal = None
        removed = np.flatnonzero(~keep)
        first = int(removed[0])
        W = self._L[:, removed][keep[first:].nonzero()[0] + first]
        _compact(self._buf, removed, keep.size)
        k = keep.size - removed.size
        self._L = self._buf[:k, :k]
        with factor_threads(self._L):
            _rank_update(self._L[first:, first:], W)
        if self._solved is not None:
            self._solved = (self._solved[0], None, self._solved[2])


def _compact(buf: np.ndarray, removed: np.ndarray, n: int) -> None:
    """buf[:k, :k] ← L[kept, kept] in place for the lower triangular L = buf[:n, :n] (strict
    upper triangle zero): the blocks between removed rows and columns move up and left, in
    order (each block is read before any later one writes over it); blocks above the diagonal
    are zero before and after, and stay."""
    bounds = np.concatenate([[-1], removed, [n]])
    # (first row, end, first row once moved) of each run of kept rows (and columns)
    runs = [(int(lo) + 1, int(hi), int(lo) + 1 - i)
            for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])) if hi > lo + 1]
    for c, (c0, c1, to_c) in enumerate(runs):
        for r0, r1, to_r in runs[c:]:
            if (to_r, to_c) != (r0, c0):
                buf[to_r:to_r + r1 - r0, to_c:to_c + c1 - c0] = buf[r0:r1, c0:c1]


def _unit_solve(L: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """L⁻¹E for the unit columns E of `rows` (ascending): column j is zero above rows[j], so
    each block of UNIT_SOLVE_BLOCK columns is solved from its first row on."""
    V = np.zeros((L.shape[0], rows.size), order="F")
    V[rows, np.arange(rows.size)] = 1.0
    for lo in range(0, rows.size, UNIT_SOLVE_BLOCK):
        lower_solve(L, V[:, lo:lo + UNIT_SOLVE_BLOCK], int(rows[lo]))
    return V


def _rank_update(T: np.ndarray, W: np.ndarray) -> None:
    """Overwrite the lower triangular T (p × p, a block of a Fortran-ordered array) with the
    factor of TTᵀ + WWᵀ (W: p × m): for each block of b = ROTATION_BLOCK columns, the QR of the
    triangle over the rectangle [T_jjᵀ; W_jᵀ] (LAPACK's tpqrt) gives the orthogonal Q with
    [T_jj W_j]Q = [R_jjᵀ 0], applied to the rows below by its block reflector (tpmqrt, about
    4·rows·m·b, BLAS-3); [T W][T W]ᵀ is unchanged."""
    p = W.shape[0]
    W = np.asfortranarray(W)
    for lo in range(0, p, ROTATION_BLOCK):
        hi = min(p, lo + ROTATION_BLOCK)
        A, V, reflector, info = la.lapack.dtpqrt(0, hi - lo, T[lo:hi, lo:hi].T, W[lo:hi].T)
        if info != 0:
            raise ValueError(f"LAPACK tpqrt refused its argument {-info}")
        apply_block_reflector(V, reflector, T[hi:, lo:hi], W[hi:])
        T[lo:hi, lo:hi] = np.tril(A.T)
        # a positive diagonal: the Cholesky factor is the one with it
        negative = np.flatnonzero(np.diagonal(A) < 0) + lo
        T[lo:, negative] *= -1.0
