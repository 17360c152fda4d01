"""Kernel blocks on a device: one GEMM (cuBLAS under CuPy) and an element-wise transform, in
float32, written for any array library with NumPy's API (CuPy on the GPU, NumPy to test the
same code on the CPU).

The data goes to the device once, dense (a CSR matrix is densified; its dense float32 copy
must fit `DEVICE_DENSE_BYTES`), or, for the solver's kernel rows, stays on the host and is
streamed to the device by blocks when it would take too much of the device's memory. For the
RBF kernel the columns are centred first, which leaves distances unchanged and keeps
||a||² + ||b||² − 2<a, b> free of float32 cancellation.

A precomputed kernel's rows are read from the given matrix (`DeviceMatrix` when it stays on
the host); a callable's are the callable's values (`CalledRows`), computed on the host and
copied to the device, or, for a callable wrapped in `kernels.kinds.OnDevice`, computed by it
on the device's arrays.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from svmkit._arrays import RawRows, to_host
from svmkit.kernels.gram import F32_NOISE, call_kernel, kernel_block, kernel_diag
from svmkit.kernels.kinds import KernelSpec

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
    """D2[r, c] = ||A[r] − B[c]||², from the row differences a bounded number at a time: at
    most _REFINE_VALUES, and at most BLOCK_SHARE of the device memory left for the three
    arrays of values each chunk makes (A[r], B[c] and their difference)."""
    values = min(_REFINE_VALUES, BLOCK_SHARE * device_memory_free(xp) / (3 * A.itemsize))
    step = int(max(1, values // max(A.shape[1], 1)))
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


def _check_dense(X, dtype) -> None:
    """Refuse data whose dense copy is too large."""
    nbytes = np.dtype(dtype).itemsize * X.shape[0] * X.shape[1]
    if nbytes > DEVICE_DENSE_BYTES:
        raise ValueError(f"device='cuda' holds X densely in {np.dtype(dtype).name} ({nbytes / 2**30:.1f} GiB here), "
                         f"more than {DEVICE_DENSE_BYTES / 2**30:.0f} GiB; use device='cpu' for data this wide")


def column_means(X) -> np.ndarray:
    """X's column means in float64 (X dense or CSR): the centre of the RBF kernel's data."""
    return np.asarray(X.mean(axis=0), dtype=np.float64).ravel()


def _dense_rows(spec: KernelSpec, X, dtype=np.float32) -> np.ndarray:
    """X on the host as the dense C-ordered `dtype` array the device kernels read (for RBF,
    columns centred on X's column means in float64 first, as `device_rows` centres them)."""
    _check_dense(X, dtype)
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    if spec.uses_norms:
        dense = dense - column_means(X)
    return np.ascontiguousarray(dense, dtype=dtype)


#: Bytes of float64 data sent to the device at once when the data is placed there.
PLACE_BYTES = 1 << 26


def _float64_block(xp, block):
    """A block of rows of X (on the host, dense or CSR: made dense there, one block at a time)
    as a fresh dense float64 array of `xp`."""
    return xp.array(block.toarray() if sp.issparse(block) else block, dtype=np.float64)


def device_rows(xp, spec: KernelSpec, X, centre=None, dtype=np.float32):
    """X as the dense `dtype` array the device kernels read, on the device of `xp`, and its
    squared row norms (RBF only, else None). X is sent by blocks of rows (a CSR block made
    dense first), each centred for RBF (on `centre`, default X's column means) in float64 on
    the device — data far from the origin keeps its digits — and rounded to `dtype` there: the
    host makes no centred or float32 copy of the whole of X."""
    _check_dense(X, dtype)
    n, d = X.shape
    shift = xp.asarray(column_means(X) if centre is None else centre) if spec.uses_norms else None
    D = xp.empty((n, d), dtype=dtype)
    step = max(1, PLACE_BYTES // max(8 * d, 1))
    for lo in range(0, n, step):
        block = _float64_block(xp, X[lo:lo + step])
        if shift is not None:
            block -= shift
        D[lo:lo + step] = block
    return D, (xp.einsum("ij,ij->i", D, D) if spec.uses_norms else None)


#: Bytes a fit may take where the device code runs on NumPy (the CPU); tests set it to make
#: the training data "not fit" and stream.
NUMPY_DEVICE_BYTES = np.inf
#: Share of the device memory left to a fit that its training data may take; past it, the data
#: stays on the host and is streamed to the device a block of rows at a time.
DATA_SHARE = 0.25
#: Share of the device memory left, once the data is placed, that the kernel row cache may take
#: (the rest: the blocks of kernel values being computed, the solver's block).
CACHE_SHARE = 0.5
#: Kernel values computed at once from one block of columns: at most this many, and at most
#: BLOCK_SHARE of the device memory left (each takes 4 bytes, and 1 for the RBF refinement's mask).
BLOCK_VALUES = 1 << 27
BLOCK_SHARE = 0.25


def device_memory_free(xp) -> float:
    """Bytes a fit may still allocate on the device of `xp`: the driver's free memory plus
    what CuPy's pool holds unused, within the pool's limit when one is set
    (`cupy.get_default_memory_pool().set_limit`); NUMPY_DEVICE_BYTES for NumPy."""
    if xp is np:
        return float(NUMPY_DEVICE_BYTES)
    pool = xp.get_default_memory_pool()
    free = xp.cuda.runtime.memGetInfo()[0] + pool.free_bytes()
    limit = pool.get_limit()
    return float(min(free, limit - pool.used_bytes()) if limit else free)


def _pinned(xp, a: np.ndarray) -> np.ndarray:
    """A copy of `a` in page-locked host memory (which the device reads by DMA, without a
    staging copy) for CuPy; `a` itself for NumPy."""
    if xp is np:
        return a
    import cupyx

    out = cupyx.empty_pinned(a.shape, dtype=a.dtype)
    out[...] = a
    return out


def fits_on_device(xp, nbytes: float) -> bool:
    """Whether an array of `nbytes` may be placed on the device of `xp`: at most DATA_SHARE of
    the memory left (`device_memory_free`)."""
    return nbytes <= DATA_SHARE * device_memory_free(xp)


class DeviceKernel:
    """Kernel rows K(x_i, ·) over the training data, computed on the device a block at a time:
    the `Kernel` of `solvers.smo.row_source`, whose cache then stays on the device (`xp`), where
    the solver runs on it.

    The data goes to the device when its float32 copy takes at most DATA_SHARE of the device
    memory left (`device_memory_free`); else it stays on the host (`streamed`; in page-locked
    memory) and each request of rows copies the requested rows, then X by blocks of rows, to
    the device, where the kernel values of each block are computed: the same float32 values
    as from the data on the device, so the same optimum. Either way the kernel values are
    computed by blocks of columns bounded by BLOCK_VALUES and the memory left."""

    def __init__(self, xp, spec: KernelSpec, X):
        self.xp = xp
        self.spec = spec
        self.n = X.shape[0]
        self.diag = kernel_diag(spec, X)
        self.host_X = X
        self.streamed = not fits_on_device(xp, 4 * X.shape[0] * X.shape[1])
        if self.streamed:
            dense = _dense_rows(spec, X)
            self.X = _pinned(xp, dense)
            self.sq = np.einsum("ij,ij->i", dense, dense) if spec.uses_norms else None
        else:
            self.X, self.sq = device_rows(xp, spec, X)

    def exact_block(self, idx: np.ndarray) -> np.ndarray:
        """K(X[idx], X[idx]) in float64 on the host, from the data as given."""
        return kernel_block(self.spec, self.host_X[idx], self.host_X[idx])

    def subset(self, idx: np.ndarray) -> "DeviceKernel":
        """The kernel of the rows `idx` only, K(x_idx[a], x_idx[b]): its rows are computed over
        those columns alone (a one-vs-one class pair's). The data is gathered where it is kept."""
        sub = object.__new__(DeviceKernel)
        sub.xp, sub.spec, sub.n, sub.streamed = self.xp, self.spec, idx.size, self.streamed
        sub.diag, sub.host_X = self.diag[idx], self.host_X[idx]
        at = np.asarray(idx) if self.streamed else self.xp.asarray(idx)
        sub.X = _pinned(self.xp, self.X[at]) if self.streamed else self.X[at]
        sub.sq = None if self.sq is None else self.sq[at]
        return sub

    def _column_step(self, n_rows: int) -> int:
        """Columns of one block of kernel values for `n_rows` rows (with the block of X they
        come from, when it is streamed)."""
        per_column = 5 * n_rows + (4 * self.X.shape[1] if self.streamed else 0)
        budget = min(5 * BLOCK_VALUES, BLOCK_SHARE * device_memory_free(self.xp))
        return int(min(self.n, max(1, budget // per_column)))

    def rows_into(self, idx: np.ndarray, out, out_rows: np.ndarray) -> None:
        """Write K(X[idx], X) into rows `out_rows` of `out`, an array of `xp` (the row cache)."""
        xp = self.xp
        idx = np.asarray(to_host(idx), dtype=np.int64)
        there = xp.asarray(out_rows)
        if self.streamed:
            A = xp.asarray(self.X[idx])
            a_sq = None if self.sq is None else xp.asarray(self.sq[idx])
        else:
            at = xp.asarray(idx)
            A, a_sq = self.X[at], None if self.sq is None else self.sq[at]
        step = self._column_step(idx.size)
        for lo in range(0, self.n, step):
            cols = slice(lo, min(self.n, lo + step))
            B = xp.asarray(self.X[cols])  # a copy to the device when streamed, else a view
            b_sq = None if self.sq is None else xp.asarray(self.sq[cols])
            if step >= self.n:
                out[there] = device_gram(xp, self.spec, A, B, a_sq, b_sq)
            else:
                out[there, cols] = device_gram(xp, self.spec, A, B, a_sq, b_sq)


class DeviceMatrix:
    """Rows of a given kernel matrix K (a precomputed kernel) that stays on the host, too large
    to be placed on the device whole (`fits_on_device`), for the device row cache: each request
    copies its rows of K, rounded to float32 on the host, to the device; the values `FullRows`
    keeps, so the same optimum. The `Kernel` of `solvers.smo.row_source`."""

    def __init__(self, xp, K, diag=None):
        self.xp, self.K, self.n = xp, K, K.shape[0]
        self.diag = np.diag(K).astype(np.float64) if diag is None else diag

    def exact_block(self, idx: np.ndarray) -> np.ndarray:
        """K[idx][:, idx] in float64 on the host, as given."""
        return np.asarray(self.K[np.ix_(idx, idx)], dtype=np.float64)

    def subset(self, idx: np.ndarray) -> "DeviceMatrix":
        """The rows and columns `idx` only (a one-vs-one class pair's), copied on the host."""
        return DeviceMatrix(self.xp, self.K[np.ix_(idx, idx)], self.diag[idx])

    def rows_into(self, idx: np.ndarray, out, out_rows: np.ndarray) -> None:
        """Write K[idx] into rows `out_rows` of `out`, an array of `xp` (the row cache)."""
        idx = np.asarray(to_host(idx), dtype=np.int64)
        out[self.xp.asarray(out_rows)] = self.xp.asarray(np.asarray(self.K[idx], dtype=np.float32))


class CalledRows:
    """Kernel rows of a callable kernel for the device row cache: K(X[idx], X) = func(X[idx], X)
    by `DeviceArrays.call` (on the host and copied, rounded to float32 there, or on the device
    for a callable wrapped in `kernels.kinds.OnDevice`), computed for the rows each request
    asks for. The `Kernel` of `solvers.smo.row_source`; the diagonal and `exact_block` are
    computed on the host, as the CPU's."""

    def __init__(self, arrays: "DeviceArrays", spec: KernelSpec, X):
        self.arrays, self.xp, self.spec, self.n = arrays, arrays.xp, spec, X.shape[0]
        self.host_X = X
        self.diag = kernel_diag(spec, X)
        self.X = arrays.called_input(spec, X)

    def exact_block(self, idx: np.ndarray) -> np.ndarray:
        """K(X[idx], X[idx]) in float64 on the host."""
        return kernel_block(self.spec, self.host_X[idx], self.host_X[idx])

    def _at(self, idx):
        """Indices of rows of `X`, where X is kept."""
        return idx if self.X is self.host_X else self.xp.asarray(idx)

    def subset(self, idx: np.ndarray) -> "CalledRows":
        """The kernel of the rows `idx` only (a one-vs-one class pair's), over their columns."""
        sub = object.__new__(CalledRows)
        sub.arrays, sub.xp, sub.spec, sub.n = self.arrays, self.xp, self.spec, idx.size
        sub.host_X, sub.diag = self.host_X[idx], self.diag[idx]
        sub.X = sub.host_X if self.X is self.host_X else self.X[self.xp.asarray(idx)]
        return sub

    def rows_into(self, idx: np.ndarray, out, out_rows: np.ndarray) -> None:
        """Write K(X[idx], X) into rows `out_rows` of `out`, an array of `xp` (the row cache)."""
        idx = np.asarray(to_host(idx), dtype=np.int64)
        out[self.xp.asarray(out_rows)] = self.arrays.call(self.spec, self.X[self._at(idx)], self.X, np.float32)


#: Kernel values (and dense values of X) of one prediction block on the device.
_PREDICT_VALUES = 2**26


def device_kernel_products(xp, spec: KernelSpec, X, centres, W, dtype=np.float32) -> np.ndarray:
    """K(X, centres) @ W (float64, on the host) with the kernel blocks computed on the device
    in `dtype`, a bounded number of rows of X at a time (W: n_centres × k). The centres go to
    the device whole when their dense copy takes at most DATA_SHARE of the device memory left,
    else a block of them at a time, the blocks' products summed."""
    shift = column_means(centres) if spec.uses_norms else None
    m, d = centres.shape
    size = np.dtype(dtype).itemsize
    per_block = int(max(1, min(m, DATA_SHARE * device_memory_free(xp) / max(size * d, 1))))
    n = X.shape[0]
    out = np.zeros((n, W.shape[1]))
    for lo in range(0, m, per_block):
        C, c_sq = device_rows(xp, spec, centres[lo:lo + per_block], shift, dtype)
        W_d = xp.asarray(W[lo:lo + per_block], dtype=np.float64)
        # bounded by the centres (the kernel block, and 1 byte a value for the RBF refinement's
        # mask) and by the features (the block of X made dense)
        values = min(_PREDICT_VALUES, BLOCK_SHARE * device_memory_free(xp) / (size + 1))
        step = int(max(1, min(n, values // max(C.shape[0], C.shape[1], 1))))
        for s in range(0, n, step):
            A, a_sq = device_rows(xp, spec, X[s:s + step], shift, dtype)
            out[s:s + step] += to_host(device_gram(xp, spec, A, C, a_sq, c_sq).astype(np.float64, copy=False) @ W_d)
    return out


class DeviceArrays:
    """Where a device computes a kernel of inner products and distances: arrays of `xp` (CuPy;
    NumPy to test the same code on the CPU), the blocks by `device_gram`. The host's
    counterpart is `kernels.kinds.HostArrays`; a kind hands either the same calls."""

    def __init__(self, xp):
        self.xp = xp

    def training_rows(self, spec: KernelSpec, X) -> DeviceKernel:
        """The rows K(x_i, ·) over the training data, computed and kept on the device."""
        return DeviceKernel(self.xp, spec, X)

    def place(self, spec: KernelSpec, X):
        """(X on the device in float64, its squared row norms for RBF, else None: `device_rows`)."""
        return device_rows(self.xp, spec, X, dtype=np.float64)

    @staticmethod
    def buffer(size):
        """None: each block is a fresh array on the device."""
        return None

    def gram(self, spec: KernelSpec, A, B, a_sq, b_sq, out=None):
        """K(A, B) on the device in the precision of A and B, a fresh array (`out` is the host's)."""
        return device_gram(self.xp, spec, A, B, a_sq, b_sq)

    def products(self, centres, X, W, dtype):
        """K(X, centres) @ W (float64, on the host), the kernel blocks on the device in `dtype`."""
        return device_kernel_products(self.xp, centres.kernel, X, centres.sv, W, dtype)

    def given_products(self, K, W) -> np.ndarray:
        """K @ W (float64, on the host) for given kernel values K on the host (a precomputed test
        kernel's columns), K sent to the device in float64 by blocks of rows."""
        xp = self.xp
        W_d = xp.asarray(W, dtype=np.float64)
        out = np.empty((K.shape[0], W.shape[1]))
        step = max(1, _PREDICT_VALUES // max(K.shape[1], 1))
        for lo in range(0, K.shape[0], step):
            out[lo:lo + step] = to_host(xp.asarray(K[lo:lo + step], dtype=np.float64) @ W_d)
        return out

    def called_input(self, spec: KernelSpec, X):
        """X as a callable kernel is handed it: placed on the device, dense float64 (`device_rows`),
        for a callable wrapped in `kernels.kinds.OnDevice`; else X on the host as given."""
        if not spec.on_device:
            return X
        if isinstance(X, RawRows):
            raise ValueError("a kernel wrapped in OnDevice is handed the data as arrays on the device: X must "
                             "hold numbers (an array or a sparse matrix); give the callable unwrapped")
        return device_rows(self.xp, spec, X, dtype=np.float64)[0]

    def call(self, spec: KernelSpec, A, B, dtype=np.float64):
        """K(A, B) = func(A, B), checked (`call_kernel`), as a fresh `dtype` array on the device
        (A and B as `called_input` gives them): computed there by a callable wrapped in
        `OnDevice`, else on the host by blocks of rows, each rounded to `dtype` there and copied."""
        xp = self.xp
        if spec.on_device:
            return call_kernel(spec, A, B, xp).astype(dtype, copy=False)
        K = xp.empty((A.shape[0], B.shape[0]), dtype=dtype)
        step = max(1, PLACE_BYTES // max(8 * B.shape[0], 1))
        for lo in range(0, A.shape[0], step):
            K[lo:lo + step] = xp.asarray(call_kernel(spec, A[lo:lo + step], B).astype(dtype, copy=False))
        return K

    def called_rows(self, spec: KernelSpec, X) -> CalledRows:
        """The rows K(x_i, ·) of a callable kernel over the training data, kept on the device."""
        return CalledRows(self, spec, X)

