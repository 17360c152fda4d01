"""Kernel blocks on a device: one GEMM (cuBLAS under CuPy) and an element-wise transform, in
float32, written for any array library with NumPy's API (CuPy on the GPU, NumPy to test the
same code on the CPU).

The data goes to the device once, dense: a CSR matrix is densified there (its dense float32
copy must fit `DEVICE_DENSE_BYTES`). For the RBF kernel the columns are centred first, which
leaves distances unchanged and keeps ||a||² + ||b||² − 2<a, b> free of float32 cancellation.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from svmkit._arrays import to_host
from svmkit.kernels.gram import F32_NOISE, kernel_block, kernel_diag
from svmkit.kernels.spec import KernelSpec

#: Largest dense copy of the training data placed on the device.
DEVICE_DENSE_BYTES = 16 * 2**30
#: Values of the row differences formed at once when near distances are recomputed.
_REFINE_VALUES = 2**24


def device_gram(xp, spec: KernelSpec, A, B, a_sq=None, b_sq=None):
    """K(A, B) on the device of `xp`, in the precision of A and B (float32, or float64 for the
    closed-form models; arrays there; a_sq, b_sq: their squared row norms, needed by the RBF
    kernel only)."""
    P = xp.matmul(A, B.T)
    if spec.name == "linear":
        return P
    if spec.name == "rbf" and xp is not np and P.dtype == np.float32:
        return _fused_rbf(xp, P, A, B, a_sq, b_sq, spec.gamma)
    if spec.name == "rbf":
        P *= -2.0
        P += a_sq[:, None]
        P += b_sq[None, :]
        if P.dtype == np.float32:  # in float64 the cancellation is negligible, as in the CPU's float64 blocks
            exact_near_distances(xp, P, A, B, a_sq, b_sq)
        xp.maximum(P, 0.0, out=P)
        P *= -spec.gamma
        return xp.exp(P, out=P)
    P *= spec.gamma
    P += spec.coef0
    if spec.name == "poly":
        return xp.power(P, spec.degree, out=P)
    return xp.tanh(P, out=P)


@functools.lru_cache(maxsize=None)
def _rbf_kernels():
    """CuPy element-wise kernels of the RBF transform: one pass for the squared distances and
    the mask of those within rounding of zero, one for exp(−γ·max(D², 0))."""
    import cupy

    distances = cupy.ElementwiseKernel(
        "float32 p, float32 a, float32 b, float32 noise", "float32 d2, bool near",
        "d2 = a + b - 2.0f * p; near = d2 <= noise * (a + b)", "svmkit_rbf_distances")
    transform = cupy.ElementwiseKernel(
        "float32 d2, float32 gamma", "float32 k", "k = expf(-gamma * fmaxf(d2, 0.0f))", "svmkit_rbf_transform")
    return distances, transform


def _near_noise(d):
    """Relative rounding of float32 squared distances in d features, below which they are
    recomputed from the differences."""
    return F32_NOISE * np.sqrt(d)


def _fused_rbf(xp, P, A, B, a_sq, b_sq, gamma):
    """The RBF branch of `device_gram` on a GPU, in two passes over P (which it overwrites)."""
    distances, transform = _rbf_kernels()
    near = xp.empty(P.shape, dtype=bool)
    distances(P, a_sq[:, None], b_sq[None, :], np.float32(_near_noise(A.shape[1])), P, near)
    _refine(xp, P, A, B, *xp.nonzero(near))
    return transform(P, np.float32(gamma), P)


def _refine(xp, D2, A, B, r, c):
    """D2[r, c] = ||A[r] − B[c]||², from the row differences a bounded number at a time."""
    step = max(1, _REFINE_VALUES // max(A.shape[1], 1))
    for s in range(0, int(r.shape[0]), step):
        rs, cs = r[s:s + step], c[s:s + step]
        diff = A[rs] - B[cs]
        D2[rs, cs] = xp.einsum("ij,ij->i", diff, diff)


def exact_near_distances(xp, D2, A, B, a_sq, b_sq):
    """Recompute from the row differences the squared distances D2 = ||a||² + ||b||² − 2<a, b>
    (float32 GEMM) within F32_NOISE·√d·(||a||² + ||b||²) of zero, where they are mostly
    rounding: identical rows would get K ≈ 1 − γ·noise, not 1, and at large C their opposite
    labels a Q_FF that is not singular (the CPU rows are refined the same way)."""
    noise = _near_noise(A.shape[1])
    _refine(xp, D2, A, B, *xp.nonzero(D2 <= noise * (a_sq[:, None] + b_sq[None, :])))


def refuse_on_device(spec: KernelSpec):
    """Raise for a kernel the device cannot compute (a callable, a precomputed matrix)."""
    raise ValueError(f"device='cuda' computes kernels from the data; kernel={spec.name!r} runs on device='cpu'")


def device_rows(xp, spec: KernelSpec, X, centre=None, dtype=np.float32):
    """X as the dense `dtype` array the device kernels read (for RBF, columns centred: on
    `centre`, default X's column means), and its squared row norms (RBF only, else None)."""
    if spec.is_callable or spec.is_precomputed:
        refuse_on_device(spec)
    nbytes = np.dtype(dtype).itemsize * X.shape[0] * X.shape[1]
    if nbytes > DEVICE_DENSE_BYTES:
        raise ValueError(f"device='cuda' holds X densely in {np.dtype(dtype).name} ({nbytes / 2**30:.1f} GiB here), "
                         f"more than {DEVICE_DENSE_BYTES / 2**30:.0f} GiB; use device='cpu' for data this wide")
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    if spec.uses_norms:
        dense = dense - (dense.mean(axis=0) if centre is None else centre)
    D = xp.asarray(np.ascontiguousarray(dense, dtype=dtype))
    return D, (xp.einsum("ij,ij->i", D, D) if spec.uses_norms else None)


class DeviceKernel:
    """Kernel rows K(x_i, ·) over the training data, computed on the device a block at a time:
    the `Kernel` of `solvers.row_source`, whose cache then stays on the device (`xp`), where
    the solver runs on it."""

    def __init__(self, xp, spec: KernelSpec, X):
        self.xp = xp
        self.spec = spec
        self.n = X.shape[0]
        self.diag = kernel_diag(spec, X)
        self.host_X = X
        self.X, self.sq = device_rows(xp, spec, X)

    def exact_block(self, idx: np.ndarray) -> np.ndarray:
        """K(X[idx], X[idx]) in float64 on the host, from the data as given."""
        return kernel_block(self.spec, self.host_X[idx], self.host_X[idx])

    def rows_into(self, idx: np.ndarray, out, out_rows: np.ndarray) -> None:
        """Write K(X[idx], X) into rows `out_rows` of `out`, an array of `xp` (the row cache)."""
        rows = self.xp.asarray(idx)
        a_sq = None if self.sq is None else self.sq[rows]
        out[self.xp.asarray(out_rows)] = device_gram(self.xp, self.spec, self.X[rows], self.X, a_sq, self.sq)


#: Kernel values (and dense values of X) of one prediction block on the device.
_PREDICT_VALUES = 2**26


def device_kernel_products(xp, spec: KernelSpec, X, centres, W, dtype=np.float32) -> np.ndarray:
    """K(X, centres) @ W (float64, on the host) with the kernel blocks computed on the device
    in `dtype`, a bounded number of rows of X at a time (W: n_centres × k)."""
    dense = centres.toarray() if sp.issparse(centres) else np.asarray(centres)
    shift = dense.mean(axis=0) if spec.uses_norms else None
    C, c_sq = device_rows(xp, spec, dense, shift, dtype)
    W_d = xp.asarray(W, dtype=np.float64)
    n = X.shape[0]
    out = np.empty((n, W.shape[1]))
    # bounded by the centres (the kernel block) and by the features (the block of X made dense)
    step = max(1, min(n, _PREDICT_VALUES // max(C.shape[0], C.shape[1], 1)))
    for s in range(0, n, step):
        A, a_sq = device_rows(xp, spec, X[s:s + step], shift, dtype)
        out[s:s + step] = to_host(device_gram(xp, spec, A, C, a_sq, c_sq).astype(np.float64, copy=False) @ W_d)
    return out
