"""K + sI solved from K's rows without the N × N matrix: K's lower triangle in float64 in LAPACK's
packed format (N(N+1)/2 entries, column by column) for the products, and the float32 Cholesky
factor of K + sI in LAPACK's rectangular full packed format (RFP: the triangle as one N(N+1)/2
rectangle, factorised as LAPACK's spftrf does, by two Cholesky factorisations, a TRSM and a SYRK,
the core's Cholesky blocked over BLAS TRSM and SYRK at close to GEMM speed; the core's parallel
triangular solves then apply it faster than spftrs).
6 bytes × N² in all, against 12 for the float64 kernel beside a full float32 factor and 24 for
a float64 kernel with its float64 copy (scikit-learn's KernelRidge).
"""

from __future__ import annotations

import numpy as np

from svmkit._core import dense
from svmkit._threads import compiled_thread_count, factor_threads
from svmkit.solvers.dense.factorisations import MixedCholeskyShift

#: Kernel entries per block of rows asked of the model (float64: 16 MB).
ROW_BLOCK_ELEMENTS = 1 << 21
#: Largest order whose triangle SciPy's LAPACK wrappers take: they check its length N(N+1)/2 in
#: 32-bit integers.
PACKED_MAX_N = 46_340
#: Fewest rows for which packed storage pays: below, the whole kernel takes at most 32 MB, which
#: LAPACK's own Cholesky factorises in place.
PACKED_MIN_N = 2_048


def rfp_layout(n: int) -> tuple[int, int, int]:
    """(e, k, ld) of LAPACK's lower RFP layout with TRANSR='N' for order n: e = 1 for even n; the
    first k columns of the triangle are stored as columns of an ld-row Fortran array, the rest
    transposed in its upper part. Column q, rows p ≥ q: at p + e + q·ld for q < k, else at
    (q − k) + (p − k + 1 − e)·ld."""
    return dense.rfp_layout(n)


def _store_rows(block, lo: int, n: int, shift: float, packed: np.ndarray, rfp: np.ndarray) -> None:
    """Rows lo … lo + len(block) − 1 of K (block[r, j − lo] = K[lo + r, j], j ≥ lo + r used) into
    the packed float64 lower triangle and, plus shift on the diagonal, the float32 RFP one. A
    block cut from wider rows is read where it lies."""
    block = np.asarray(block, dtype=np.float64)
    if block.ndim == 2 and block.shape[1] > 1 and block.strides[1] != block.itemsize:
        block = np.ascontiguousarray(block)
    dense.store_rows(block, lo, n, shift, packed, rfp)


def _packed_products(packed: np.ndarray, n: int, P, parts: int) -> np.ndarray:
    """K·P for K given by its packed lower triangle and P (m × n, one vector a row): each of
    `parts` parts takes a run of columns holding about as many entries, into its own
    accumulator; the accumulators are summed at the end."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    out = np.empty((P.shape[0], n))
    dense.packed_products(packed, n, P, parts, out)
    return out


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
            info = dense.rfp_cholesky(rfp, n)
        self.factor32 = rfp if info == 0 and bool(np.all(np.isfinite(rfp[self._diagonal()]))) else None

    def _diagonal(self):
        """Positions of the diagonal in the RFP array."""
        e, k, ld = rfp_layout(self.n)
        q = np.arange(self.n)
        return np.where(q < k, q + e + q * ld, (q - k) + (q - k + 1 - e) * ld)

    def _matvec(self, P):
        return _packed_products(self.packed, self.n, P.T, compiled_thread_count()).T + self.shift * P

    def _solve32(self, R):
        X = np.ascontiguousarray(R.T)
        dense.rfp_cholesky_solve(self.factor32, self.n, X)
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
