"""Element-wise kernel transforms applied to a block of inner products, in the compiled core
(`svmkit._core.kernels`).

Each takes the inner-product block P = A Bᵀ and writes kernel values into rows `out_rows` of
`out`, in parallel over rows. The RBF exponential is evaluated inline (range reduction to
2^k · e^r with |r| ≤ ln2/2 and a degree-11 Taylor polynomial, relative error < 1e-14) so that
the loops vectorise; a library `exp` call would not.
"""

import numpy as np

from svmkit._arrays import as_float64, as_indices
from svmkit._core import kernels as _kernels
from svmkit._threads import compiled_thread_count

LINEAR, POLY, RBF, SIGMOID = 0, 1, 2, 3

#: Most rows per chunk of the parallel loops (a chunk's rows run in turn on one thread); fewer
#: when the rows would not give every thread a chunk.
ROW_CHUNK = 64
#: Kernel values below which a block is computed without starting threads.
SERIAL_ELEMENTS = 2**18


def _chunk_rows(q):
    """Rows per chunk for q rows: at most ROW_CHUNK, and at least one chunk per thread."""
    threads = compiled_thread_count()
    return max(1, min(ROW_CHUNK, (q + threads - 1) // threads))


def _values(a):
    """a as a C-contiguous float32 or float64 array (float64 for any other type)."""
    a = np.asarray(a)
    return np.ascontiguousarray(a, dtype=a.dtype if a.dtype in (np.float32, np.float64) else np.float64)


def refine_rbf_rows(out, out_rows, idx, X, sq, gamma, noise):
    """Recompute in float64, from the differences themselves, the RBF values of rows `idx`
    (written to rows `out_rows` of `out`) whose squared distance d² came from a float32 inner
    product and is within `noise`·(||a||² + ||b||²) of zero, where ||a||² + ||b||² − 2<a, b>
    is mostly rounding: identical rows would get K ≈ 1 − γ·noise·2||a||², not 1, and at
    large C their opposite labels a Q_FF that is not singular. X: the float64 rows, sq the
    squared norms the GEMM saw (of the centred rows)."""
    _kernels.refine_rbf_rows(out, as_indices(out_rows), as_indices(idx), as_float64(X), as_float64(sq), float(gamma),
                             float(noise))


def rbf_rows_gemm(A, a_sq, C, c_sq, gamma, out, out_rows):
    """out[out_rows[r], j] = exp(−γ max(a_sq[r] + c_sq[j] − 2<A_r, C_j>, 0)) for float32 rows A
    and columns C, by cache-sized tiles of one SGEMM each (on one BLAS thread per tile)."""
    if A.shape[0]:
        _kernels.rbf_rows_gemm(np.ascontiguousarray(A, dtype=np.float32), np.ascontiguousarray(a_sq, dtype=np.float32),
                               np.ascontiguousarray(C, dtype=np.float32), np.ascontiguousarray(c_sq, dtype=np.float32),
                               float(gamma), out, as_indices(out_rows))


def rbf_rows_direct(Xt, idx, gamma, out, out_rows):
    """Write the RBF kernel rows of the points `idx` against every column of Xt (features ×
    points, float64) into rows `out_rows` of `out`, from the differences themselves."""
    size = 0 if idx.shape[0] * Xt.shape[1] <= SERIAL_ELEMENTS else _chunk_rows(idx.shape[0])
    _kernels.rbf_rows_direct(as_float64(Xt), as_indices(idx), float(gamma), out, as_indices(out_rows), size)


def finish_block(P, a_sq, b_sq, spec, out, out_rows):
    """Turn inner products P into the values of the kernel `spec` (a KernelSpec: its transform,
    gamma, coef0 and degree), written to rows `out_rows` of `out`; a_sq and b_sq, the squared
    norms of P's rows and columns (taken in P's precision), are read by the RBF kernel only."""
    if P.shape[0] == 0:
        return
    P = _values(P)
    if spec.transform == RBF:
        _kernels.finish_rbf(P, np.ascontiguousarray(a_sq, dtype=P.dtype), np.ascontiguousarray(b_sq, dtype=P.dtype),
                            float(spec.gamma), out, as_indices(out_rows), _chunk_rows(P.shape[0]))
    else:
        _kernels.finish_other(P, int(spec.transform), float(spec.gamma), float(spec.coef0), float(spec.degree), out,
                              as_indices(out_rows))


def dense_products(X, x_sq, C, c_sq, spec, W):
    """K(X, C) W (float64; X, C dense, x_sq and c_sq their rows' squared norms when the kernel
    reads them, else empty) in cache-sized tiles on the compiled threads."""
    out = np.empty((X.shape[0], W.shape[1]))
    params = _kernels.KernelParams(int(spec.transform), float(spec.gamma), float(spec.coef0), float(spec.degree))
    _kernels.dense_products(as_float64(X), as_float64(x_sq), as_float64(C), as_float64(c_sq), as_float64(W),
                            params, out)
    return out
