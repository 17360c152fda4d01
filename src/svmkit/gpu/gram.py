"""Kernel blocks on the device: one GEMM (cuBLAS under CuPy) and an element-wise transform, in
float32, written for any array library with NumPy's API (CuPy on the GPU, NumPy to test the
same code on the CPU).

The data goes to the device once, dense: a CSR matrix is densified there (its dense float32
copy must fit `DEVICE_DENSE_BYTES`). For the RBF kernel the columns are centred first, which
leaves distances unchanged and keeps ||a||² + ||b||² − 2<a, b> free of float32 cancellation.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmkit.kernels.gram import F32_NOISE, kernel_diag
from svmkit.gpu.runtime import to_host
from svmkit.kernels.spec import KernelSpec

#: Largest dense float32 copy of the training data placed on the device.
DEVICE_DENSE_BYTES = 16 * 2**30
#: Values of the row differences formed at once when near distances are recomputed.
_REFINE_VALUES = 2**24


def device_gram(xp, spec: KernelSpec, A, B, a_sq=None, b_sq=None):
    """K(A, B) in float32 on the device of `xp` (A, B: float32 arrays there; a_sq, b_sq: their
    squared row norms, needed by the RBF kernel only)."""
    P = xp.matmul(A, B.T)
    if spec.name == "linear":
        return P
    if spec.name == "rbf":
        P *= -2.0
        P += a_sq[:, None]
        P += b_sq[None, :]
        exact_near_distances(xp, P, A, B, a_sq, b_sq)
        xp.maximum(P, 0.0, out=P)
        P *= -spec.gamma
        return xp.exp(P, out=P)
    P *= spec.gamma
    P += spec.coef0
    if spec.name == "poly":
        return xp.power(P, spec.degree, out=P)
    return xp.tanh(P, out=P)


def exact_near_distances(xp, D2, A, B, a_sq, b_sq):
    """Recompute from the row differences the squared distances D2 = ||a||² + ||b||² − 2<a, b>
    (float32 GEMM) within F32_NOISE·√d·(||a||² + ||b||²) of zero, where they are mostly
    rounding: identical rows would get K ≈ 1 − γ·noise, not 1, and at large C their opposite
    labels a Q_FF that is not singular (the CPU rows are refined the same way)."""
    noise = F32_NOISE * np.sqrt(A.shape[1])
    r, c = xp.nonzero(D2 <= noise * (a_sq[:, None] + b_sq[None, :]))
    step = max(1, _REFINE_VALUES // max(A.shape[1], 1))
    for s in range(0, int(r.shape[0]), step):
        rs, cs = r[s:s + step], c[s:s + step]
        diff = A[rs] - B[cs]
        D2[rs, cs] = xp.einsum("ij,ij->i", diff, diff)


def device_rows(xp, spec: KernelSpec, X):
    """X as the dense float32 array the device kernels read (columns centred for RBF), and its
    squared row norms (RBF only, else None)."""
    if spec.is_callable or spec.is_precomputed:
        raise ValueError(f"device='cuda' computes kernels from the data; kernel={spec.name!r} runs on device='cpu'")
    nbytes = 4 * X.shape[0] * X.shape[1]
    if nbytes > DEVICE_DENSE_BYTES:
        raise ValueError(f"device='cuda' holds X densely in float32 ({nbytes / 2**30:.1f} GiB here), more than "
                         f"{DEVICE_DENSE_BYTES / 2**30:.0f} GiB; use device='cpu' for data this wide")
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    if spec.uses_norms:
        dense = dense - dense.mean(axis=0)
    D = xp.asarray(np.ascontiguousarray(dense, dtype=np.float32))
    return D, (xp.einsum("ij,ij->i", D, D) if spec.uses_norms else None)


class DeviceKernel:
    """Kernel rows K(x_i, ·) over the training data, computed on the device a block at a time
    and copied into the host row cache: the `Kernel` of `solvers.row_source`, so the solver
    runs unchanged on rows from the GPU."""

    def __init__(self, xp, spec: KernelSpec, X):
        self.xp = xp
        self.spec = spec
        self.n = X.shape[0]
        self.diag = kernel_diag(spec, X)
        self.X, self.sq = device_rows(xp, spec, X)

    def rows_into(self, idx: np.ndarray, out: np.ndarray, out_rows: np.ndarray) -> None:
        """Write K(X[idx], X) into rows `out_rows` of the host array `out`."""
        rows = self.xp.asarray(idx)
        a_sq = None if self.sq is None else self.sq[rows]
        K = device_gram(self.xp, self.spec, self.X[rows], self.X, a_sq, self.sq)
        out[out_rows] = to_host(K)
