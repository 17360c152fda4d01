"""Cholesky factorisation and solves in compiled code, for the small dense systems of the SMO
solver's Newton steps: blocked in panels of PANEL columns, each panel in scalar loops and the
rest of the matrix by BLAS products."""

import numpy as np
from numba import njit

#: Columns of one panel of the blocked factorisation: factored in scalar loops, the rest of
#: the matrix then updated by matrix products.
PANEL = 64


@njit(cache=True, nogil=True)
def forward_solve(R, B):
    """X with RᵀX = B (R upper triangular with a nonzero diagonal, B: k × r), by panels of
    PANEL rows, each panel's product with the rows solved before it by BLAS, so that many
    right-hand sides cost little more than one."""
    k, r = B.shape
    X = B.copy()
    for j0 in range(0, k, PANEL):
        j1 = min(k, j0 + PANEL)
        if j0 > 0:
            X[j0:j1] -= np.dot(np.ascontiguousarray(R[:j0, j0:j1].T), X[:j0])
        for i in range(j0, j1):
            inv = 1.0 / R[i, i]
            for c in range(r):
                X[i, c] *= inv
            for t in range(i + 1, j1):
                f = R[i, t]
                for c in range(r):
                    X[t, c] -= f * X[i, c]
    return X


@njit(cache=True, nogil=True)
def cholesky_solve(R, B):
    """X with RᵀR X = B: `forward_solve`, then back substitution by the same panels."""
    X = forward_solve(R, B)
    k, r = B.shape
    for j0 in range((k - 1) // PANEL * PANEL, -1, -PANEL):
        j1 = min(k, j0 + PANEL)
        if j1 < k:
            X[j0:j1] -= np.dot(np.ascontiguousarray(R[j0:j1, j1:]), X[j1:])
        for i in range(j1 - 1, j0 - 1, -1):
            for t in range(i + 1, j1):
                f = R[i, t]
                for c in range(r):
                    X[i, c] -= f * X[t, c]
            inv = 1.0 / R[i, i]
            for c in range(r):
                X[i, c] *= inv
    return X


@njit(cache=True, nogil=True)
def _inverse_upper_t(R, kept):
    """(R⁻¹)ᵀ on the kept rows of the upper triangular R (zero on the others)."""
    nb = R.shape[0]
    Zt = np.zeros((nb, nb))
    for c in range(nb):
        if not kept[c]:
            continue
        Zt[c, c] = 1.0 / R[c, c]
        for i in range(c - 1, -1, -1):
            if kept[i]:
                Zt[c, i] = -np.dot(R[i, i + 1:c + 1], Zt[c, i + 1:c + 1]) / R[i, i]
    return Zt


@njit(cache=True, nogil=True)
def independent_cholesky(H, floor):
    """Upper triangular R with H = RᵀR on the rows it keeps: row i is dropped (its row and
    column of R left zero) when its pivot, what H_ii adds beyond the rows kept before it, is
    at most `floor`. Blocked (panels of PANEL columns, the trailing matrix updated by BLAS
    products), so it runs near the speed of LAPACK's Cholesky. Returns (R, kept)."""
    k = H.shape[0]
    A = H.copy()
    kept = np.zeros(k, dtype=np.bool_)
    for j0 in range(0, k, PANEL):
        j1 = min(k, j0 + PANEL)
        for j in range(j0, j1):
            for c in range(j0, j):
                if kept[c]:
                    f = A[c, j]
                    for t in range(j, j1):
                        A[j, t] -= f * A[c, t]
            d = A[j, j]
            if d > floor:
                kept[j] = True
                A[j, j] = np.sqrt(d)
                for t in range(j + 1, j1):
                    A[j, t] /= A[j, j]
            else:
                A[j, j0:j1] = 0.0
                A[:j, j] = 0.0
        if j1 < k:
            # the panel's rows right of it: R11ᵀ R12 = A12; then A22 −= R12ᵀR12 on the upper part
            Zt = _inverse_upper_t(np.ascontiguousarray(A[j0:j1, j0:j1]), kept[j0:j1])
            R12 = np.dot(Zt, np.ascontiguousarray(A[j0:j1, j1:]))
            A[j0:j1, j1:] = R12
            for b0 in range(0, k - j1, 4 * PANEL):
                b1 = min(k - j1, b0 + 4 * PANEL)
                A[j1 + b0:j1 + b1, j1 + b0:] -= np.dot(np.ascontiguousarray(R12[:, b0:b1].T),
                                                       np.ascontiguousarray(R12[:, b0:]))
    for i in range(k):
        A[i, :i] = 0.0
    return A, kept
