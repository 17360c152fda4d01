"""Triangular solves with a Cholesky factor in LAPACK's lower RFP format (TRANSR='N'), in
parallel, for the preconditioner of each conjugate gradient step: LAPACK's spftrs streams the
factor at a third of the memory bandwidth (N = 10,000: 30 ms a solve, 19.5 ms here). The factor
L = [[L11, 0], [L21, L22]] sits in an ld-row Fortran array as L11 and L21 in its first k columns
and L22ᵀ (upper) at its top (see `rfp_layout`).

Every matrix here is a view of the flat factor `a`: M[r, c] = a[off + r + c·ld], columns
contiguous. Each triangle is solved in blocks of BLOCK columns: the block's own triangle
serially, its product with the rest of the vector in parallel (over rows, or over columns).
"""

import numpy as np
from numba import njit, prange

#: Columns per block of a triangular solve.
BLOCK = 256
#: Rows per parallel chunk of a matrix–vector update.
CHUNK = 1024


@njit(cache=True, nogil=True)
def rfp_layout(n):
    """(e, k, ld) of LAPACK's lower RFP layout with TRANSR='N' for order n: e = 1 for even n; the
    first k columns of the triangle are stored as columns of an ld-row Fortran array, the rest
    transposed in its upper part. Column q, rows p ≥ q: at p + e + q·ld for q < k, else at
    (q − k) + (p − k + 1 − e)·ld."""
    e = 1 - n % 2
    return e, (n + 1 - e) // 2, n + e


@njit(parallel=True, cache=True, nogil=True, fastmath=True)
def _sub_rows(a, off, ld, r0, r1, c0, c1, v, y):
    """y[r] −= Σ_c M[r, c]·v[c] for r in [r0, r1), c in [c0, c1); in parallel over chunks of
    CHUNK rows (whose part of y stays in the first-level cache)."""
    for ch in prange((r1 - r0 + CHUNK - 1) // CHUNK):
        lo = r0 + ch * CHUNK
        hi = min(r1, lo + CHUNK)
        ys = y[lo:hi]
        for c in range(c0, c1):
            vc = v[c]
            col = a[off + c * ld + lo: off + c * ld + hi]
            for t in range(hi - lo):
                ys[t] -= col[t] * vc


@njit(parallel=True, cache=True, nogil=True, fastmath=True)
def _sub_dots(a, off, ld, r0, r1, c0, c1, v, y):
    """y[c] −= Σ_r M[r, c]·v[r] for c in [c0, c1), r in [r0, r1); in parallel over columns."""
    vs = v[r0:r1]
    for c in prange(c0, c1):
        col = a[off + c * ld + r0: off + c * ld + r1]
        s = np.float32(0.0)
        for t in range(r1 - r0):
            s += col[t] * vs[t]
        y[c] -= s


@njit(cache=True, nogil=True)
def _lower_solve(a, off, ld, m, x):
    """x ← L⁻¹x for the lower m × m triangle L at (off, ld)."""
    for j0 in range(0, m, BLOCK):
        j1 = min(m, j0 + BLOCK)
        for j in range(j0, j1):
            col = a[off + j * ld + j: off + j * ld + j1]
            xj = x[j] / col[0]
            x[j] = xj
            rest = x[j:j1]
            for t in range(1, j1 - j):
                rest[t] -= col[t] * xj
        _sub_rows(a, off, ld, j1, m, j0, j1, x, x)


@njit(cache=True, nogil=True)
def _lower_transpose_solve(a, off, ld, m, x):
    """x ← L⁻ᵀx for the lower m × m triangle L at (off, ld)."""
    j1 = m
    while j1 > 0:
        j0 = max(0, j1 - BLOCK)
        _sub_dots(a, off, ld, j1, m, j0, j1, x, x)
        for j in range(j1 - 1, j0 - 1, -1):
            col = a[off + j * ld + j: off + j * ld + j1]
            rest = x[j:j1]
            s = x[j]
            for t in range(1, j1 - j):
                s -= col[t] * rest[t]
            x[j] = s / col[0]
        j1 = j0


@njit(cache=True, nogil=True)
def _upper_transpose_solve(a, off, ld, m, x):
    """x ← U⁻ᵀx for the upper m × m triangle U at (off, ld)."""
    for j0 in range(0, m, BLOCK):
        j1 = min(m, j0 + BLOCK)
        _sub_dots(a, off, ld, 0, j0, j0, j1, x, x)
        for j in range(j0, j1):
            col = a[off + j * ld + j0: off + j * ld + j + 1]
            done = x[j0:j]
            s = x[j]
            for t in range(j - j0):
                s -= col[t] * done[t]
            x[j] = s / col[j - j0]


@njit(cache=True, nogil=True)
def _upper_solve(a, off, ld, m, x):
    """x ← U⁻¹x for the upper m × m triangle U at (off, ld)."""
    j1 = m
    while j1 > 0:
        j0 = max(0, j1 - BLOCK)
        for j in range(j1 - 1, j0 - 1, -1):
            col = a[off + j * ld + j0: off + j * ld + j + 1]
            xj = x[j] / col[j - j0]
            x[j] = xj
            rest = x[j0:j]
            for t in range(j - j0):
                rest[t] -= col[t] * xj
        _sub_rows(a, off, ld, 0, j0, j0, j1, x, x)
        j1 = j0


@njit(cache=True, nogil=True)
def rfp_cholesky_solve(a, n, X):
    """X ← (LLᵀ)⁻¹X for L the lower RFP factor `a` of order n (spftrf's) and each row of X
    (float32, m × n): L z = x by L11, L21 and L22 = Uᵀ, then Lᵀ x = z in reverse."""
    e, k, ld = rfp_layout(n)
    l11, l21, u = e, k + e, (0 if e else ld)
    m2 = n - k
    for i in range(X.shape[0]):
        x1, x2 = X[i, :k], X[i, k:]
        _lower_solve(a, l11, ld, k, x1)
        _sub_rows(a, l21, ld, 0, m2, 0, k, x1, x2)
        _upper_transpose_solve(a, u, ld, m2, x2)
        _upper_solve(a, u, ld, m2, x2)
        _sub_dots(a, l21, ld, 0, m2, 0, k, x2, x1)
        _lower_transpose_solve(a, l11, ld, k, x1)
