"""Gram blocks K(A, B) for dense or CSR data, many rows per call.

Inner products come from one BLAS GEMM (dense data) or, for CSR data of low overlap, BLAS on
the frequent features plus a compiled sparse scatter on the rest. The RBF kernel goes through
squared norms, ||a - b||² = ||a||² + ||b||² - 2<a, b>. The element-wise transform runs in
compiled parallel code.

Element-wise transforms (`finish_block` and the RBF rows): each takes the inner-product block
P = A Bᵀ and writes kernel values into rows `out_rows` of `out`, in parallel over rows. The RBF
exponential is evaluated inline (range reduction to 2^k · e^r with |r| ≤ ln2/2 and a degree-11
Taylor polynomial, relative error < 1e-14) so that the loops vectorise; a library `exp` call
would not.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from svmkit._arrays import SCRATCH, as_float64, as_indices, growing_copy, raw_data, with_rows
from svmkit._core import kernels as _kernels
from svmkit._threads import alone, compiled_thread_count, one_blas_thread
from svmkit.kernels._sparse import sparse_inner_rows
from svmkit.parallel.tasks import run_tasks

if TYPE_CHECKING:
    from svmkit.kernels.kinds import KernelSpec


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


#: Densify CSR data when the dense copy needs at most this many bytes and the sparse scatter
#: would not save enough work: its work relative to a dense product is the column overlap
#: (see `column_overlap`), and it runs many times slower per operation than BLAS.
DENSIFY_BYTES = 512 * 2**20
#: Largest column overlap kept sparse for prediction blocks and for training rows; training
#: rows of all data points scatter into long rows that leave the cache, hence the lower bound.
PREDICT_OVERLAP = 0.08
TRAIN_OVERLAP = 0.01
#: At prediction, a feature of sparse data used by more than this fraction of the rows goes
#: through BLAS: its scatter work grows with the square of the fraction, BLAS's does not. Training
#: rows span all data points and the split costs more than it saves there (measured on w8a), so
#: training keeps every feature in the scatter. At prediction on w8a and a9a, 0.25 beats 0.1,
#: 0.18 and 0.4.
DENSE_COLUMN_FRACTION = 0.25
_EMPTY = np.zeros(0)
#: Dense RBF training rows of at most this many features come from the differences
#: themselves (`rbf_rows_direct`), not from a GEMM plus a pass over its result.
DIRECT_MAX_FEATURES = 16
#: Elements of the inner-product buffer when training rows are computed in chunks.
_CHUNK_ELEMENTS = 2**22
#: Multiply-adds from which a training rows' GEMM runs on every core, in column slabs of
#: GEMM_SLAB each on one BLAS thread: below it the threads' start and spin cost more than they
#: gain. OpenBLAS's own threads would sum in an order that depends on their number;
#: fixed slabs give the same values on any number of cores.
THREADED_GEMM = 2**30
GEMM_SLAB = 2048
#: Squared distances from a float32 GEMM below this fraction of ||a||² + ||b||² (times √d,
#: as rounding errors of a sum of d terms grow) are taken as rounding and recomputed: 100
#: times float32's unit, so that what is kept is at least 99 % distance.
F32_NOISE = 100 * 2.0**-24


def _slab_product(A, X, P, lo, hi):
    """P[:, lo:hi] = A X[lo:hi]ᵀ."""
    np.matmul(A, X[lo:hi].T, out=P[:, lo:hi])


def row_hashes(X) -> np.ndarray:
    """A hash of each row's bits (dense, or canonical CSR: its stored indices and values), in
    wrapping 64-bit integers: exact, so that equal rows hash alike wherever they sit, as a
    floating-point product's rounding need not."""
    if sp.issparse(X):
        sums = np.concatenate([np.zeros(1, dtype=np.uint64),
                               np.cumsum(_mixed(as_float64(X.data).view(np.uint64), X.indices))])
        return sums[X.indptr[1:]] - sums[X.indptr[:-1]]
    # dense rows: the values' bits folded (high half into low) times odd random weights per
    # column, one integer product
    X = np.ascontiguousarray(X, dtype=np.float64)
    w = _mixed(np.arange(X.shape[1], dtype=np.uint64), np.zeros(1, dtype=np.uint64)) | np.uint64(1)
    step = max(1, _CHUNK_ELEMENTS // max(X.shape[1], 1))
    return np.concatenate([_folded(X[s:s + step]) @ w for s in range(0, X.shape[0], step)] or
                          [np.zeros(0, dtype=np.uint64)])


def first_equal_rows(X, hashes=None) -> np.ndarray | None:
    """For each row of X (dense, or canonical CSR), the index of the first row equal to it, bit
    for bit (for CSR: the same stored indices and values); None when every row differs. Rows are
    grouped by their hashes (`row_hashes`, or `hashes` when known), then compared within the
    groups that share one, so distinct data costs one pass and a sort."""
    n = X.shape[0]
    if n < 2 or X.shape[1] == 0:
        return None
    h = row_hashes(X) if hashes is None else hashes
    order = np.argsort(h, kind="stable")
    tied = h[order[1:]] == h[order[:-1]]
    if not tied.any():
        return None
    candidates = np.zeros(n, dtype=bool)
    candidates[order[1:][tied]] = candidates[order[:-1][tied]] = True
    cand = np.flatnonzero(candidates)
    same = np.arange(n, dtype=np.int64)
    if sp.issparse(X):
        # neighbours in hash order that are equal join one run, whose first is its earliest row
        # (the sort is stable); a group whose hash two different rows share is compared row by row
        a, b = order[:-1], order[1:]
        link = tied.copy()
        link[tied] = _equal_csr_rows(X, a[tied], b[tied])
        start = np.r_[True, ~link]
        same[order] = order[np.flatnonzero(start)][np.cumsum(start) - 1]
        collided = np.isin(h, h[a[tied & ~link]])
        first = {}
        for i in np.flatnonzero(collided):
            row = slice(X.indptr[i], X.indptr[i + 1])
            same[i] = first.setdefault((X.indices[row].tobytes(), X.data[row].tobytes()), i)
    else:
        rows = np.ascontiguousarray(X[cand])
        keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        # np.unique's first index of a group is its earliest row: cand is sorted
        same[cand] = cand[first[inverse.ravel()]]
    return None if (same == np.arange(n)).all() else same


def _mixed(bits: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea & Flood, OOPSLA 2014) of each value's bits and its
    column: every bit of the input moves about half the bits of the output, so that sums over
    rows of few distinct values (0/1 data) do not collide as sums of the raw bits would."""
    z = bits ^ (columns.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _folded(X: np.ndarray) -> np.ndarray:
    """The bits of float64 X with their high half folded into the low one: the values of 0/1
    data differ in their high bits only, which products with the weights would drop."""
    bits = X.view(np.uint64)
    return bits ^ (bits >> np.uint64(32))


def _equal_csr_rows(X, a, b) -> np.ndarray:
    """Whether rows a[k] and b[k] of the canonical CSR X store the same indices and values, bit
    for bit, for every k."""
    nnz = np.diff(X.indptr)
    equal = nnz[a] == nnz[b]
    lens = nnz[a][equal]
    total = int(lens.sum())
    if total == 0:
        return equal
    offsets = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
    ia, ib = np.repeat(X.indptr[a][equal], lens) + offsets, np.repeat(X.indptr[b][equal], lens) + offsets
    data = as_float64(X.data).view(np.uint64)
    same = (X.indices[ia] == X.indices[ib]) & (data[ia] == data[ib])
    nonempty = lens > 0
    starts = (np.cumsum(lens) - lens)[nonempty]
    whole = np.ones(lens.size, dtype=bool)
    whole[nonempty] = np.logical_and.reduceat(same, starts)
    equal[equal] = whole
    return equal


def column_overlap(X) -> float:
    """Mean over features of (fraction of rows using the feature)²: the work of the sparse
    scatter K(X, X) relative to a dense product (1 for dense data)."""
    if not sp.issparse(X) or X.shape[0] == 0 or X.shape[1] == 0:
        return 1.0
    # counted over the columns used only: an index near 2³¹ must not size an array
    frac = np.unique(X.indices, return_counts=True)[1] / X.shape[0]
    return float(np.sum(frac * frac) / X.shape[1])


def as_kernel_input(X, max_overlap=PREDICT_OVERLAP):
    """Return X as C-contiguous float64 (dense) or canonical CSR float64 (when too large to
    densify, or when its column overlap is below `max_overlap`)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        if X.shape[0] * X.shape[1] * 8 <= DENSIFY_BYTES and column_overlap(X) >= max_overlap:
            return np.ascontiguousarray(X.toarray())
        X.sort_indices()
        return X
    return np.ascontiguousarray(X, dtype=np.float64)


def csr_parts(X):
    """(indptr, indices, data) of a CSR or CSC matrix with int64 indices, as the compiled loops take them."""
    return X.indptr.astype(np.int64), X.indices.astype(np.int64), np.asarray(X.data, dtype=np.float64)


def row_sq_norms(X) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


class SparseColumns:
    """A CSR matrix B ready for the inner products <a, b_s> of sparse rows a with all its rows:
    its frequent features as a dense block for BLAS, the others in CSC parts for the scatter.
    The scatter's columns are the m columns B uses, renumbered 0 … m − 1 (a column B does not
    use adds nothing to an inner product), so that no array is sized by the index of the widest
    feature (an index near 2³¹ would take gigabytes)."""

    def __init__(self, B, dense_fraction=DENSE_COLUMN_FRACTION):
        B = sp.csr_matrix(B, dtype=np.float64)
        self.used, counts = np.unique(B.indices, return_counts=True)
        frequent = counts / max(B.shape[0], 1) > dense_fraction
        self.dense_cols = self.used[frequent]
        # column selections on the renumbered columns: SciPy's on CSR allocate per column
        self._dense_at = np.flatnonzero(frequent)
        self.n_rows = B.shape[0]
        rest = self._compact(B.copy())
        self.dense = np.ascontiguousarray(rest[:, self._dense_at].toarray())
        rest.data[frequent[rest.indices]] = 0.0
        rest.eliminate_zeros()
        # one more, empty, column: where the rows of A put the features B does not use
        self.csc = csr_parts(sp.csr_matrix((rest.data, rest.indices, rest.indptr),
                                           shape=(B.shape[0], self.used.size + 1)).tocsc())

    def _compact(self, A):
        """A (CSR) with each column renumbered to its place among B's columns, those B does not
        use to m."""
        m = self.used.size
        at = np.searchsorted(self.used, A.indices)
        found = at < m
        found[found] = self.used[at[found]] == A.indices[found]
        return sp.csr_matrix((A.data, np.where(found, at, m), A.indptr), shape=(A.shape[0], m + 1))

    def prepare(self, A):
        """A (CSR) as `inner` reads it, converted once for many calls: its columns renumbered,
        the frequent ones as a dense block, and the csr_parts of the whole."""
        compact = self._compact(sp.csr_matrix(A))
        dense = np.ascontiguousarray(compact[:, self._dense_at].toarray()) if self.dense_cols.size else None
        return dense, csr_parts(compact)

    def with_rows(self, prepared, added) -> tuple | None:
        """(the SparseColumns of B's rows then those of `added` (CSR), `prepare` of the same
        rows, from `prepared`, B's own), B's columns not converted again: each column's
        entries of the added rows go after its entries of B. None when B has dense columns or
        `added` uses a feature B does not (the columns would be renumbered)."""
        compact = self._compact(sp.csr_matrix(added, dtype=np.float64))
        if self.dense_cols.size or (compact.indices == self.used.size).any():
            return None
        more = compact.tocsc()
        indptr, indices, data = self.csc
        old_count, new_count = np.diff(indptr), np.diff(more.indptr)
        at_old = np.arange(indices.size) + np.repeat(more.indptr[:-1], old_count)
        at_new = np.arange(more.nnz) + np.repeat(indptr[1:], new_count)
        joined = copy.copy(self)
        joined.n_rows = self.n_rows + added.shape[0]
        joined_indices, joined_data = np.empty(indices.size + more.nnz, dtype=np.int64), np.empty(indices.size + more.nnz)
        joined_indices[at_old], joined_data[at_old] = indices, data
        joined_indices[at_new], joined_data[at_new] = more.indices + self.n_rows, more.data
        joined.csc = (indptr + more.indptr, joined_indices, joined_data)
        # B has no dense columns: its rows as `prepare` gives them are their csr_parts only
        (b_indptr, b_indices, b_data), (a_indptr, a_indices, a_data) = prepared[1], csr_parts(compact)
        rows = (np.concatenate([b_indptr, a_indptr[1:] + b_indptr[-1]]), np.concatenate([b_indices, a_indices]),
                np.concatenate([b_data, a_data]))
        return joined, (None, rows)

    def inner(self, a, out, rows):
        """out[r, s] = <A[rows[r]], b_s> for the A that `prepare` gave `a`."""
        dense, parts = a
        if dense is not None:
            np.matmul(dense[rows], self.dense.T, out=out)
        else:
            out[...] = 0.0
        sparse_inner_rows(*parts, rows, *self.csc, out)
        return out


def _inner(A, B, b_split=None, out=None) -> np.ndarray:
    """Dense <a_i, b_j> for every row pair, float64, into `out` when given. A sparse B goes
    through its SparseColumns (`b_split`, if already made)."""
    if not sp.issparse(B):
        return np.matmul(A.toarray() if sp.issparse(A) else A, B.T, out=out)
    if out is None:
        out = np.empty((A.shape[0], B.shape[0]))
    split = b_split or SparseColumns(B)
    return split.inner(split.prepare(A), out, np.arange(A.shape[0], dtype=np.int64))


def call_kernel(spec: KernelSpec, A, B, xp=np) -> np.ndarray:
    """A callable kernel's K(A, B) as a float64 array of `xp` (NumPy; CuPy for A and B on a
    device), checked: a ValueError naming the callable when it is not of shape (A rows,
    B rows) or not finite, which the solvers would turn into an IndexError or a silently
    wrong fit."""
    K = spec.func(raw_data(A), raw_data(B))
    # a SciPy sparse matrix (of any format) as scikit-learn's SVMs take it: densified
    K = xp.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
    name = getattr(spec.func, "__qualname__", repr(spec.func))
    if K.shape != (A.shape[0], B.shape[0]):
        raise ValueError(f"kernel callable {name} returned shape {K.shape} for {A.shape[0]} and {B.shape[0]} "
                         f"rows; it must return K(A, B) of shape ({A.shape[0]}, {B.shape[0]})")
    if not bool(xp.isfinite(K).all()):
        kind = "NaN" if bool(xp.isnan(K).any()) else "infinity"
        raise ValueError(f"kernel callable {name} returned {kind} for {A.shape[0]} and {B.shape[0]} rows; "
                         "kernel values must be finite")
    return K


def kernel_block(spec: KernelSpec, A, B, b_sq=None, out=None, b_split=None) -> np.ndarray:
    """K(A, B) as a dense float64 array (`b_sq`: the squared row norms of B, `b_split`: the
    SparseColumns of a sparse B, if known).

    `out`, when given, is a float64 buffer of at least A.shape[0] × B.shape[0] elements that is
    reused for the inner products and the result, so that repeated blocks fault in no new pages.
    """
    if spec.is_callable:
        return call_kernel(spec, A, B)
    a_sq = row_sq_norms(A) if spec.uses_norms else _EMPTY
    if spec.uses_norms and b_sq is None:
        b_sq = row_sq_norms(B)
    shape = (A.shape[0], B.shape[0])
    K = np.empty(shape) if out is None else out.ravel()[: shape[0] * shape[1]].reshape(shape)
    _inner(A, B, b_split, out=K)
    finish_block(K, a_sq, b_sq if spec.uses_norms else _EMPTY, spec, K, np.arange(shape[0], dtype=np.int64))
    return K


#: Rows per call of a callable kernel when its diagonal is taken.
_CALLABLE_DIAG_ROWS = 256


def kernel_diag(spec: KernelSpec, X) -> np.ndarray:
    """K(x_i, x_i) for every row of X (float64); a callable kernel is called on blocks of rows."""
    if spec.is_callable:
        step = _CALLABLE_DIAG_ROWS
        return np.concatenate([np.diag(call_kernel(spec, X[s:s + step], X[s:s + step]))
                               for s in range(0, X.shape[0], step)] or [np.zeros(0)])
    return spec.of_self(row_sq_norms(X))


class TrainingKernel:
    """The training data of one fit, ready to give kernel rows K(x_i, ·) over all of it.

    `dtype` is the precision of the rows' consumer: float32 for the SMO row cache (LIBSVM's
    precision), float64 for the closed-form models. Dense RBF data of few features take the
    differences directly; of more, a GEMM in `dtype` on centred columns, which leaves
    distances unchanged and keeps ||a||² + ||b||² − 2<a, b> free of most cancellation; in
    float32 the distances that are mostly rounding (identical and nearly identical rows) are
    recomputed in float64 (`refine_rbf_rows`), as LIBSVM computes them. The other kernels
    take float64 inner products, rounded once when stored, so that they give the rows a
    precomputed Gram matrix of the same kernel gives.

    Equal data rows have equal kernel rows, computed once, and equal columns: the kernel's
    columns are its distinct points, `n_columns` of them (callable kernels: every row), data
    row j's value at column `column_of[j]` (column j when `column_of` is None). A row is asked
    for by its column (`rows_into`).

    The kernel `updated` makes may hold columns no data row has (an update's forgotten rows'
    points).
    """

    def __init__(self, spec: KernelSpec, X, dtype=np.float32):
        self.spec = spec
        dense_rbf = spec.uses_norms and not sp.issparse(X)
        self._direct = dense_rbf and X.shape[1] <= DIRECT_MAX_FEATURES
        self._dtype = np.dtype(dtype) if dense_rbf else np.dtype(np.float64)
        # centred by every point's mean, whichever are kept as columns (and the added points of
        # `updated` by the same: any centre leaves distances as they are)
        self._centre = X.mean(axis=0) if dense_rbf and not self._direct else None
        # the points' `row_hashes`, kept for the kernel `updated` makes (None: not computed)
        self.hashes = None
        if not spec.is_callable and X.shape[1] and X.shape[0] > 1:
            self.hashes = row_hashes(X)
        same_point = None if self.hashes is None else first_equal_rows(X, self.hashes)
        column_of = None
        if same_point is not None:
            distinct = np.flatnonzero(same_point == np.arange(X.shape[0]))
            column_of = np.searchsorted(distinct, same_point)
            X = X[distinct]
            self.hashes = self.hashes[distinct]
        self._points(*self._of_points(X))
        self._data_rows(column_of)

    def _of_points(self, G) -> tuple:
        """What the rows are computed from, for the points G as given: G (float64 where the
        exact blocks read it), the operand of the inner products (dense RBF of many features:
        centred, in `dtype`), its squared row norms where the kernel uses them, and K(g, g)."""
        G = G if sp.issparse(G) or self._centre is None else np.ascontiguousarray(G, dtype=np.float64)
        operand = G if self._centre is None else np.ascontiguousarray(G - self._centre, dtype=self._dtype)
        sq = row_sq_norms(operand) if self.spec.uses_norms and not self._direct else None
        return G, operand, sq, kernel_diag(self.spec, G)

    def _points(self, given, operand, sq, diag, earlier=None) -> None:
        """Hold the kernel's columns (its distinct points) and what their rows are computed from
        (`_of_points`); `earlier`: the kernel whose points are the first of these, the others
        added (sparse data: its columns' conversion is extended, not made again)."""
        self.given, self.X, self.sq, self._point_diag = given, operand, sq, diag
        self.n_columns = given.shape[0]
        self._Xt = self._split = self._parts = self._exact = None
        if sp.issparse(given):
            extended = None if earlier is None else \
                earlier._split.with_rows(earlier._parts, given[earlier.n_columns:])
            if extended is None:
                self._split = SparseColumns(given, dense_fraction=np.inf)
                self._parts = self._split.prepare(given)
            else:
                self._split, self._parts = extended
        elif self._direct:
            self._Xt = np.ascontiguousarray(given.T, dtype=np.float64)
        elif self._centre is not None and self._dtype == np.float32:
            # the recomputed distances come from the rows as given, the noise bound from the
            # centred norms the GEMM's rounding scales with
            self._exact = (sq.astype(np.float64), F32_NOISE * np.sqrt(given.shape[1]))
        # whole rows from a float32 GEMM fused with the exponential on every core come faster
        # than a float64 block (`columns_block`) of a few times fewer values on one
        self.fast_rows = self._exact is not None

    def _data_rows(self, column_of) -> None:
        """Data row i is column column_of[i] (None: column i)."""
        self.column_of = column_of
        self.n = self.n_columns if column_of is None else column_of.size
        self.diag = self._point_diag if column_of is None else self._point_diag[column_of]

    def updated(self, earlier_row: np.ndarray, X_added) -> TrainingKernel | None:
        """The kernel of the same spec on changed data rows: data row i is this kernel's data
        row earlier_row[i], or (−1) the next row of `X_added`. Its columns are this kernel's, in
        their order, then the added points no column equals: rows kept from this kernel hold
        their values at every earlier column. None when X_added is not in this kernel's
        layout (dense or CSR)."""
        if sp.issparse(X_added) != sp.issparse(self.given):
            return None
        earlier = earlier_row >= 0
        point_of = np.cumsum(~earlier) - 1 + self.n_columns
        point_of[earlier] = self._columns(earlier_row[earlier])
        kernel = copy.copy(self)
        if X_added.shape[0]:
            added = X_added if sp.issparse(X_added) else np.asarray(X_added, dtype=np.float64)
            hashes = None if self.hashes is None else row_hashes(added)
            column_of, new = self._added_columns(added, hashes)
            added = added if new.size == added.shape[0] else added[new]
            if hashes is not None:
                kernel.hashes = np.concatenate([self.hashes, hashes[new]])
            given, operand, sq, diag = self._of_points(added)
            joined = with_rows(self.given, given)
            kernel._points(joined, joined if self.X is self.given else with_rows(self.X, operand),
                           None if sq is None else np.concatenate([self.sq, sq]),
                           np.concatenate([self._point_diag, diag]), earlier=self)
            point_of = np.concatenate([np.arange(self.n_columns), column_of])[point_of]
        kernel._data_rows(point_of)
        return kernel

    def _added_columns(self, added, hashes) -> tuple:
        """(the column of each added point: an earlier column equal to it, else n_columns plus
        its place among the new points; the new points, by their index in `added`). Only the
        earlier columns of an added point's hash are compared: the columns are distinct."""
        m, n0 = added.shape[0], self.n_columns
        if hashes is None:
            return n0 + np.arange(m), np.arange(m)
        near = np.flatnonzero(np.isin(self.hashes, hashes))
        stack = (lambda parts: sp.vstack(parts, format="csr")) if sp.issparse(added) else np.concatenate
        same = first_equal_rows(stack([self.given[near], added]), np.concatenate([self.hashes[near], hashes]))
        if same is None:
            return n0 + np.arange(m), np.arange(m)
        same = same[near.size:]
        new = np.flatnonzero(same == near.size + np.arange(m))
        earlier = same < near.size
        return np.where(earlier, near[np.minimum(same, near.size - 1)] if near.size else 0,
                        n0 + np.searchsorted(new, same - near.size)), new

    def grow_in_place(self) -> None:
        """Hold the points in buffers with room after them, into which `updated` writes an
        update's points instead of copying every point again (the buffers' unwritten rows take
        no memory)."""
        given = growing_copy(self.given)
        self.X = given if self.X is self.given else growing_copy(self.X)
        self.given = given

    def restricted(self, cols: np.ndarray) -> TrainingKernel:
        """The kernel over its columns `cols` (distinct) only, data row i being column cols[i]:
        its rows are K(point, ·) over those points, computed as this kernel computes them (the
        same centre, norms and precision)."""
        cols = np.asarray(cols, dtype=np.int64)
        kernel = copy.copy(self)
        given = self.given[cols]
        kernel._points(given, given if self.X is self.given else self.X[cols],
                       None if self.sq is None else self.sq[cols], self._point_diag[cols])
        kernel.hashes = None if self.hashes is None else self.hashes[cols]
        kernel._data_rows(None)
        return kernel

    def _columns(self, idx) -> np.ndarray:
        """The kernel's columns (its distinct points) of data rows idx."""
        idx = np.asarray(idx, dtype=np.int64)
        return idx if self.column_of is None else self.column_of[idx]

    def _inner_rows(self, idx, buf):
        """<x_i, x_j> for i in idx and every j, into the first rows of `buf`."""
        P = buf[: idx.size]
        if sp.issparse(self.X):
            self._split.inner(self._parts, P, np.asarray(idx, dtype=np.int64))
        elif P.size * self.X.shape[1] < THREADED_GEMM:
            np.matmul(self.X[idx], self.X.T, out=P)
        else:
            with one_blas_thread():
                slabs = [(c, min(self.n_columns, c + GEMM_SLAB)) for c in range(0, self.n_columns, GEMM_SLAB)]
                # on this thread alone when another's compiled work shares the cores
                run_tasks(_slab_product, slabs, shared=(self.X[idx], self.X, P), n_jobs=None if alone() else 1)
        return P

    def exact_block(self, idx: np.ndarray) -> np.ndarray:
        """K(X[idx], X[idx]) of data rows idx in float64 from the data as given."""
        at = self._columns(idx)
        return self.columns_block(at, at)

    def columns_block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """K between the kernel's columns (its distinct points) `rows` and `cols`, in float64
        from the data as given."""
        return kernel_block(self.spec, self.given[np.asarray(rows, dtype=np.int64)],
                            self.given[np.asarray(cols, dtype=np.int64)])

    def rows_into(self, idx: np.ndarray, out: np.ndarray, out_rows: np.ndarray) -> None:
        """Write K(point, ·) of the kernel's columns `idx` into rows `out_rows` of `out`, in its
        first `n_columns` columns (`out` may be wider)."""
        idx = np.asarray(idx, dtype=np.int64)
        if self.spec.is_callable:
            out[out_rows, : self.n_columns] = call_kernel(self.spec, self.X[idx], self.X)
            return
        if self._Xt is not None:
            rbf_rows_direct(self._Xt, idx, self.spec.gamma, out, np.asarray(out_rows, dtype=np.int64))
            return
        if self._exact is not None:
            # float32 RBF: the exponential taken tile by tile while the GEMM's values are in cache
            with one_blas_thread():
                rbf_rows_gemm(self.X[idx], self.sq[idx], self.X, self.sq, self.spec.gamma, out, out_rows)
            sq, noise = self._exact
            refine_rbf_rows(out, np.asarray(out_rows, dtype=np.int64), idx, self.given, sq, self.spec.gamma, noise)
            return
        step = max(1, min(idx.size, _CHUNK_ELEMENTS // max(self.n_columns, 1)))
        buf = SCRATCH.take((step, self.n_columns), self._dtype)
        for s in range(0, idx.size, step):
            sub = idx[s:s + step]
            a_sq = self.sq[sub] if self.sq is not None else _EMPTY
            b_sq = self.sq if self.sq is not None else _EMPTY
            sub_rows = np.asarray(out_rows[s:s + step], dtype=np.int64)
            finish_block(self._inner_rows(sub, buf), a_sq, b_sq, self.spec, out, sub_rows)
        SCRATCH.give(buf)


class CentreKernel:
    """K(X, C) of rows X against fixed centres C (the support vectors at prediction), float64,
    by blocks of rows of X, each a serial task (`block`). Sparse centres go through their
    SparseColumns, with X converted once for all its blocks (`rows_of`)."""

    def __init__(self, spec: KernelSpec, C):
        self.spec = spec
        self.n = C.shape[0]
        self.C = C
        self.split = SparseColumns(C) if sp.issparse(C) and not spec.is_callable else None
        self.sq = row_sq_norms(C) if spec.uses_norms else None

    def rows_of(self, X):
        """What `block` reads of X beside X, converted once: with a sparse split, X's prepared
        rows and squared norms."""
        if self.split is None:
            return None
        return self.split.prepare(X), row_sq_norms(X) if self.spec.uses_norms else _EMPTY

    def block(self, X, x, lo, hi, buf):
        """K(X[lo:hi], C) in `buf` (at least (hi − lo) × n float64 elements); `x`: `rows_of(X)`."""
        shape = (hi - lo, self.n)
        K = buf[:shape[0] * shape[1]].reshape(shape)
        if self.spec.is_callable:
            K[...] = call_kernel(self.spec, X[lo:hi], self.C)
        elif self.split is not None:
            prepared, sq = x
            self.split.inner(prepared, K, np.arange(lo, hi, dtype=np.int64))
            finish_block(K, sq[lo:hi] if self.spec.uses_norms else _EMPTY, self.sq if self.spec.uses_norms else _EMPTY,
                         self.spec, K, np.arange(shape[0], dtype=np.int64))
        else:
            kernel_block(self.spec, X[lo:hi], self.C, self.sq, out=K)
        return K
