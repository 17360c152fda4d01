"""K + sI solved from K's rows without the N × N matrix: K's lower triangle in float64 in LAPACK's
packed format (N(N+1)/2 entries, column by column) for the products, and the float32 Cholesky
factor of K + sI in LAPACK's rectangular full packed format (RFP: the triangle as one N(N+1)/2
rectangle, which its factorisation spftrf runs through level-3 BLAS at the speed of potrf).
6 bytes × N² in all, against 12 for the float64 kernel beside a full float32 factor and 24 for
a float64 kernel with its float64 copy (scikit-learn's KernelRidge).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as la
from numba import get_num_threads, njit, prange

from svmkit._threads import factor_threads
from svmkit.solvers._rfp_solve import rfp_cholesky_solve, rfp_layout
from svmkit.solvers.factorisations import MixedCholeskyShift

#: Kernel entries per block of rows asked of the model (float64: 16 MB).
ROW_BLOCK_ELEMENTS = 1 << 21
#: Largest order whose triangle SciPy's LAPACK wrappers take: they check its length N(N+1)/2 in
#: 32-bit integers.
PACKED_MAX_N = 46_340
#: Fewest rows for which packed storage pays: below, the whole kernel takes at most 32 MB and
#: LAPACK's own Cholesky on it needs no compiled loop (a first fit with an empty Numba cache
#: compiles nothing for its factorisation).
PACKED_MIN_N = 2_048


#: Columns per tile in which the rows of K are written across the RFP array.
STORE_TILE = 64


@njit(parallel=True, cache=True, nogil=True)
def _store_rows(block, lo, n, shift, packed, rfp):
    """Rows lo … lo + len(block) − 1 of K (block[r, j − lo] = K[lo + r, j], j ≥ lo + r used) into
    the packed float64 lower triangle and, plus shift on the diagonal, the float32 RFP one."""
    e, k, ld = rfp_layout(n)
    hi = lo + block.shape[0]
    for r in prange(block.shape[0]):
        q = lo + r
        m = n - q
        src = block[r, r:r + m]
        dst = packed[q * n - q * (q - 1) // 2:][:m]
        for t in range(m):
            dst[t] = src[t]
        if q < k:  # column q of the triangle is a column of the RFP array
            col = rfp[q + e + q * ld:][:m]
            for t in range(m):
                col[t] = np.float32(src[t])
            col[0] = np.float32(src[0] + shift)
    # columns q ≥ k are rows of the RFP array (L22ᵀ): written along its columns, tile by tile
    q0 = max(lo, k)
    for tile in prange((n - q0 + STORE_TILE - 1) // STORE_TILE if q0 < hi else 0):
        for p in range(q0 + tile * STORE_TILE, min(n, q0 + (tile + 1) * STORE_TILE)):
            col = rfp[(p - k + 1 - e) * ld:]
            for q in range(q0, min(hi, p + 1)):
                col[q - k] = np.float32(block[q - lo, p - lo] + (shift if q == p else 0.0))


@njit(cache=True, nogil=True, fastmath=True)
def _columns_product(packed, n, x, y, j0, j1):
    """y += the part of K·x held by columns j0 … j1 − 1 of K's packed lower triangle: each
    column's dot product with x into y[j], and its entries below the diagonal times x[j] into
    y[j + 1:] (two loops, each of which vectorises; fused, neither does)."""
    for j in range(j0, j1):
        base = j * n - j * (j - 1) // 2
        m = n - j
        a, xs, ys = packed[base:base + m], x[j:], y[j:]
        s = 0.0
        for t in range(m):
            s += a[t] * xs[t]
        xj = x[j]
        for t in range(1, m):
            ys[t] += a[t] * xj
        y[j] += s


@njit(parallel=True, cache=True, nogil=True)
def _packed_products(packed, n, P, threads):
    """K·P for K given by its packed lower triangle and P (m × n, one vector a row): each of
    `threads` parts takes a run of columns holding about as many entries, into its own
    accumulator; the accumulators are summed at the end."""
    m = P.shape[0]
    total = n * (n + 1) // 2
    bounds = np.full(threads + 1, n, dtype=np.int64)
    bounds[0] = 0
    j = 0
    for part in range(1, threads):
        while j < n and j * n - j * (j - 1) // 2 < total * part // threads:
            j += 1
        bounds[part] = j
    acc = np.zeros((threads, m, n))
    for part in prange(threads):
        for c in range(m):
            _columns_product(packed, n, P[c], acc[part, c], bounds[part], bounds[part + 1])
    return acc.sum(axis=0)


class PackedMixedCholesky(MixedCholeskyShift):
    """H = K + sI built from K's rows and solved as MixedCholeskyShift (conjugate gradient with
    float64 products, preconditioned by the float32 factor; the float64 factorisation when that
    fails), in 6 bytes × N²: K's packed lower triangle and the RFP float32 factor.

    `rows(lo, hi)` gives K[lo:hi, lo:] as a float64 array, asked in blocks of ROW_BLOCK_ELEMENTS
    entries; only each row's entries from its diagonal on are read. n ≤ PACKED_MAX_N."""

    def __init__(self, n: int, rows, shift: float):
        if n > PACKED_MAX_N:
            raise ValueError(f"packed storage takes at most {PACKED_MAX_N} rows, got {n}")
        self.n, self.shift, self.xp, self.rows = n, shift, np, rows
        self._double = None
        size = n * (n + 1) // 2
        self.packed = np.empty(size)
        rfp = np.empty(size, dtype=np.float32)
        for lo, hi in self._blocks():
            _store_rows(rows(lo, hi), lo, n, shift, self.packed, rfp)
        with factor_threads(rfp):
            factor, info = la.lapack.spftrf(n, rfp, transr="N", uplo="L", overwrite_a=True)
        self.factor32 = factor if info == 0 and bool(np.all(np.isfinite(factor[self._diagonal()]))) else None

    def _diagonal(self):
        """Positions of the diagonal in the RFP array."""
        e, k, ld = rfp_layout(self.n)
        q = np.arange(self.n)
        return np.where(q < k, q + e + q * ld, (q - k) + (q - k + 1 - e) * ld)

    def _matvec(self, P):
        return _packed_products(self.packed, self.n, np.ascontiguousarray(P.T), get_num_threads()).T + self.shift * P

    def _solve32(self, R):
        X = np.ascontiguousarray(R.T)
        rfp_cholesky_solve(self.factor32, self.n, X)
        return X.T

    def _blocks(self):
        step = max(1, ROW_BLOCK_ELEMENTS // max(self.n, 1))
        return [(lo, min(self.n, lo + step)) for lo in range(0, self.n, step)]

    def _kernel(self):
        """K for the float64 factorisation (its upper triangle; the lower view of its Fortran
        transpose), its rows asked again once the packed arrays are released: 8 bytes × N² at
        the peak, not 12."""
        self.packed = None
        K = np.empty((self.n, self.n))
        for lo, hi in self._blocks():
            K[lo:hi, lo:] = self.rows(lo, hi)
        return K
