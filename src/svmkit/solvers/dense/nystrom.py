"""Nyström solves of the closed-form kernel models for large N, through M centres: the M × M
normal equations summed over row blocks in one pass, or conjugate gradient on a matrix–vector
function, preconditioned as Falkon does, when M is large.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as la

from svmkit._arrays import to_host
from svmkit.solvers.dense.factorisations import conjugate_gradient, not_positive_definite


#: Step limit of the Nyström CG.
NYSTROM_MAX_ITER = 500
#: Largest K_NM kept in memory between CG steps (bytes); past it, blocks are recomputed.
NYSTROM_KEEP_BYTES = 1 << 30
#: Rows of K_NM computed at a time.
NYSTROM_BLOCK_ELEMENTS = 1 << 24
#: Most centres M for which the normal equations are formed whole (M² doubles, N·M² flops of
#: BLAS syrk in one pass over K_NM); past it, CG's passes of N·M kernel entries each are cheaper.
NYSTROM_DIRECT_MAX = 4096


def falkon_preconditioner(K_MM: np.ndarray, n: int, shift: float):
    """P⁻¹r ≈ (K_NMᵀK_NM + s·K_MM)⁻¹r from K_NMᵀK_NM ≈ (n/M)·K_MM² (Rudi, Carratino & Rosasco
    2017): with K_MM = TᵀT and (n/M)·TTᵀ + sI = AᵀA (Cholesky, T jittered when K_MM is
    singular), P = TᵀAᵀAT and P⁻¹r = T⁻¹A⁻¹A⁻ᵀT⁻ᵀr."""
    m = K_MM.shape[0]
    jitter = 1e-9 * m * max(float(np.mean(np.diag(K_MM))), np.finfo(float).tiny)
    try:
        T = la.cholesky(K_MM + jitter * np.eye(m), lower=False, check_finite=False)
        A = la.cholesky((n / m) * (T @ T.T) + shift * np.eye(m), lower=False, check_finite=False)
    except la.LinAlgError as err:
        raise not_positive_definite(shift, f"centres' kernel: {err}") from None

    def apply(r):
        v = la.solve_triangular(T, r, trans="T", check_finite=False)
        v = la.solve_triangular(A, v, trans="T", check_finite=False)
        v = la.solve_triangular(A, v, check_finite=False)
        return la.solve_triangular(T, v, check_finite=False)

    return apply


def nystrom_solve(block, n: int, K_MM: np.ndarray, B: np.ndarray, shift: float, bias: bool, tol: float, xp=np):
    """β (M × k) and b (k) minimising ‖K_NM β + 1bᵀ − B‖² + s·tr(βᵀK_MM β) (b = 0 unless
    `bias`). `block(rows, keep)` gives K(X[rows], centres) in float64 (rows: a slice), in a
    buffer it reuses unless `keep`, an array of `xp` (CuPy: the blocks and their products on
    the GPU). Up to NYSTROM_DIRECT_MAX centres, the normal equations are summed over row
    blocks in one pass and solved by Cholesky on the host (see `nystrom_normal_solve`); past
    it by CG preconditioned as Falkon does (the products where the blocks are, the M × M
    preconditioner on the host), stopping at relative residual
    `tol` (b, unpenalised, is preconditioned by 1/n), with K_NM kept whole only when it fits
    NYSTROM_KEEP_BYTES."""
    m = K_MM.shape[0]
    B = B.reshape(n, -1)
    step = max(1, NYSTROM_BLOCK_ELEMENTS // max(m, 1))
    spans = [slice(s, min(n, s + step)) for s in range(0, n, step)]
    if m <= NYSTROM_DIRECT_MAX:
        return _nystrom_direct(block, spans, K_MM, B, shift, bias, xp)
    return _nystrom_cg(block, spans, K_MM, B, shift, bias, tol, xp)


def _nystrom_direct(block, spans, K_MM, B, shift, bias, xp=np):
    """The normal equations of `nystrom_solve` formed in one pass: K_NMᵀK_NM by syrk (numpy
    takes that path for Kᵀ @ K of one buffer) and K_NMᵀ[B, 1] by one product per block, both
    summed where the blocks are (`xp`); the M × M system is solved on the host."""
    n, k = B.shape
    m = K_MM.shape[0]
    B1 = xp.asarray(np.column_stack([B, np.ones(n)]))
    H = xp.zeros((m, m))
    KtB1 = xp.zeros((m, k + 1))
    gram = xp.empty((m, m))
    for rows in spans:
        Kb = block(rows)
        xp.matmul(Kb.T, Kb, out=gram)
        H += gram
        KtB1 += Kb.T @ B1[rows]
    return normal_equations_solve(to_host(H), to_host(KtB1), B.sum(axis=0), n, K_MM, shift, bias)


def normal_equations_solve(H, KtB1, B_sum, n, K_MM, shift, bias):
    """(β, b) from the sums of `_nystrom_direct`'s one pass (as a map-reduce over row blocks
    also gives them): H = K_NMᵀK_NM, KtB1 = K_NMᵀ[B, 1], B_sum = 1ᵀB over n rows."""
    m = K_MM.shape[0]
    k = KtB1.shape[1] - 1
    if not bias:
        return nystrom_normal_solve(H, KtB1[:, :k], K_MM, shift), np.zeros(k)
    # b unpenalised: the bordered system [[H + sK_MM, K_NMᵀ1], [1ᵀK_NM, n]]·[β; b] = [K_NMᵀB; 1ᵀB]
    H_b = np.empty((m + 1, m + 1))
    H_b[:m, :m] = H + shift * K_MM
    H_b[:m, m] = H_b[m, :m] = KtB1[:, k]
    H_b[m, m] = n
    z = _cholesky_or_lstsq(H_b, np.vstack([KtB1[:, :k], B_sum]))
    return z[:m], z[m]


def _nystrom_cg(block, spans, K_MM, B, shift, bias, tol, xp=np):
    """The CG route of `nystrom_solve` over the row blocks `spans`: the products with K_NM and
    the iterates where the blocks are (`xp`), the M × M preconditioner on the host."""
    n, k = B.shape
    m = K_MM.shape[0]
    kept = [block(rows, keep=True) for rows in spans] if 8 * n * m <= NYSTROM_KEEP_BYTES else None
    B_there, K_MM_there = xp.asarray(B), xp.asarray(K_MM)

    def blocks():
        for i, rows in enumerate(spans):
            yield rows, (kept[i] if kept is not None else block(rows))

    rhs = xp.zeros((m + 1, k))
    for rows, Kb in blocks():
        rhs[:m] += Kb.T @ B_there[rows]
        rhs[m] += B_there[rows].sum(axis=0)

    def matvec(z):
        z = z.reshape(m + 1, k)
        beta, b = z[:m], z[m] if bias else xp.zeros(k)
        out = xp.zeros((m + 1, k))
        for rows, Kb in blocks():
            u = Kb @ beta + b
            out[:m] += Kb.T @ u
            out[m] += u.sum(axis=0)
        out[:m] += shift * (K_MM_there @ beta)
        if not bias:
            out[m] = 0.0
        return out

    falkon = falkon_preconditioner(K_MM, n, shift)

    def precondition(r):
        r = to_host(r)
        out = np.empty_like(r)
        out[:m] = falkon(r[:m])
        out[m] = r[m] / n if bias else 0.0
        return xp.asarray(out)

    if not bias:
        rhs[m] = 0.0
    z, _ = conjugate_gradient(matvec, rhs, precondition, tol, NYSTROM_MAX_ITER, xp=xp)
    z = to_host(z)
    return z[:m], z[m]


def nystrom_normal_solve(KtK: np.ndarray, KtY: np.ndarray, K_MM: np.ndarray, shift: float) -> np.ndarray:
    """β from the Nyström normal equations (K_NMᵀK_NM + s·K_MM)β = K_NMᵀY, formed whole (as a
    map-reduce over row blocks gives them); least squares when a singular K_MM leaves the
    matrix singular."""
    return _cholesky_or_lstsq(KtK + shift * K_MM, KtY)


def _cholesky_or_lstsq(H: np.ndarray, R: np.ndarray) -> np.ndarray:
    """H⁻¹R for symmetric positive semi-definite H: Cholesky, or least squares when H is singular."""
    try:
        return la.cho_solve(la.cho_factor(H, lower=True, check_finite=False), R, check_finite=False)
    except la.LinAlgError:
        return la.lstsq(H, R, check_finite=False)[0]
