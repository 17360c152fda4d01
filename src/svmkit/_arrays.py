"""Array helpers every layer shares: a device array or sparse matrix as a plain host array, a
digest of array values, and scratch memory kept between fits (`SCRATCH`)."""

from __future__ import annotations

import hashlib
import threading
import weakref

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _num_samples


def to_host(a):
    """A CuPy array (or CuPy sparse matrix) copied to the host; anything else unchanged."""
    if hasattr(a, "__cuda_array_interface__") or type(a).__module__.startswith("cupyx"):
        return a.get()
    return a


def as_indices(a) -> np.ndarray:
    """`a` as the compiled core takes indices: C-contiguous int64 (itself when it is one)."""
    return np.ascontiguousarray(a, dtype=np.int64)


def as_float64(a) -> np.ndarray:
    """`a` as the compiled core takes values: C-contiguous float64 (itself when it is one)."""
    return np.ascontiguousarray(a, dtype=np.float64)


def densify(a):
    """A SciPy sparse matrix as a dense array; anything else unchanged."""
    return a.toarray() if sp.issparse(a) else a


def _kind(dtype) -> str:
    """The kind letter of a NumPy dtype or a pandas extension dtype, which np.dtype cannot
    interpret: Int64, boolean, Sparse[float] give their values' kind, a categorical its
    categories', the string dtype 'O'."""
    categories = getattr(dtype, "categories", None)
    return getattr(categories.dtype if categories is not None else dtype, "kind", "O")


def holds_float32(X) -> bool:
    """Whether every value of X (an array, a sparse matrix, a DataFrame's columns) is float32:
    scikit-learn's KernelRidge keeps float32 through a fit and a prediction."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and not hasattr(X, "dtype"):
        return len(dtypes) > 0 and all(isinstance(t, np.dtype) and t == np.float32 for t in dtypes)
    return getattr(X, "dtype", None) == np.float32


def holds_numbers(X) -> bool:
    """Whether X is numbers in an array: a SciPy sparse matrix, an array of a numeric dtype, or
    a DataFrame whose every column is numeric (not a list, strings or objects)."""
    if sp.issparse(X):
        return True
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and not hasattr(X, "dtype"):
        return all(_kind(t) in "biuf" for t in dtypes)
    return _kind(getattr(X, "dtype", np.dtype(object))) in "biuf"


def data_fingerprint(*arrays) -> str:
    """A digest of the arrays' values (CSR: its three arrays): equal for the same data."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        parts = (a.data, a.indices, a.indptr) if sp.issparse(a) else (a,)
        for part in parts:
            part = np.ascontiguousarray(part)
            h.update(str((part.dtype, part.shape)).encode())
            h.update(part.view(np.uint8).ravel())
    return h.hexdigest()


class RawRows:
    """Rows of data handed to a callable kernel as the user gave them (a list of strings, of
    sequences, a DataFrame, an array), as scikit-learn's SVMs hand them: rows are taken by index
    or slice without converting the data, and `shape` is (n_samples,)."""

    def __init__(self, data):
        self.data = data
        self.shape = (_num_samples(data),)

    def __getitem__(self, rows):
        if isinstance(rows, slice):
            rows = np.arange(self.shape[0])[rows]
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        data = self.data
        if hasattr(data, "iloc"):
            return RawRows(data.iloc[rows])
        if isinstance(data, np.ndarray) or sp.issparse(data):
            return RawRows(data[rows])
        return RawRows([data[int(i)] for i in rows])

    def __len__(self):
        return self.shape[0]


def raw_data(X):
    """The data a callable kernel is given: a RawRows' rows as the user gave them, else X."""
    return X.data if isinstance(X, RawRows) else X



def in_layout_of(a, template):
    """`a` in `template`'s layout: CSR when `template` is sparse, else a dense array."""
    if sp.issparse(template):
        return sp.csr_matrix(a)
    return a.toarray() if sp.issparse(a) else a


def state_value(value):
    """A fitted attribute as a model file gives it back: a sparse matrix as it is, a 0-d value as
    its Python scalar, anything else an ndarray."""
    if sp.issparse(value):
        return value
    return value.item() if np.ndim(value) == 0 else np.asarray(value)


def stored_values(a) -> np.ndarray:
    """The values `a` stores: a sparse matrix's nonzeros, an array's every value."""
    return a.data if sp.issparse(a) else np.asarray(a)


def check_same_layout(first, second, names=("X", "the rows before")) -> None:
    """A ValueError naming `names` and their layouts unless `first` and `second` are both dense
    or both sparse."""
    layouts = ["sparse" if sp.issparse(a) else "dense" for a in (second, first)]
    if layouts[0] != layouts[1]:
        raise ValueError(f"{names[0]} is {layouts[0]} but {names[1]} are {layouts[1]}; give {names[0]} in the same layout")


def stack_rows(first, second, names=("X", "the rows before")):
    """The rows of `first`, then those of `second`: both dense or both CSR (`check_same_layout`)."""
    check_same_layout(first, second, names)
    return sp.vstack([first, second], format="csr") if sp.issparse(first) else np.vstack([first, second])

class Scratch:
    """Scratch memory kept between fits: the kernel-row store and the solver's work buffers.

    On a virtual machine the first write to a fresh page costs more than the arithmetic that
    fills it (NumPy's huge-page requests most of all), and model selection is thousands of
    fits. Buffers handed back are kept, up to `keep_bytes` in all, for the next request of the
    same process (`SCRATCH`)."""

    def __init__(self, keep_bytes: int):
        self.keep_bytes = keep_bytes
        self._kept: list[np.ndarray] = []
        # buffers handed back and not yet kept: `give` runs from finalizers too, which the
        # garbage collector may call in the very thread that holds `_lock` inside `take`
        self._returned: list[np.ndarray] = []
        self._lock = threading.Lock()

    def take(self, shape, dtype) -> np.ndarray:
        """An uninitialised C-contiguous array, on reused memory when a kept buffer is large enough."""
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        with self._lock:
            self._keep_returned()
            fits = [k for k, b in enumerate(self._kept) if b.nbytes >= nbytes]
            if fits:
                buf = self._kept.pop(min(fits, key=lambda k: self._kept[k].nbytes))
            else:
                self._kept.clear()  # a larger fit is coming: keep its buffers instead, not both
                buf = None
        if buf is None:
            buf = np.empty(max(nbytes, 1), dtype=np.uint8)
        return buf[:nbytes].view(dtype).reshape(shape)

    def give(self, arr: np.ndarray) -> None:
        """Hand back an array from `take` (or any view of it); it must not be used afterwards."""
        base = arr
        while base.base is not None:
            base = base.base
        if not isinstance(base, np.ndarray) or base.dtype != np.uint8 or base.nbytes > self.keep_bytes:
            return
        self._returned.append(base)
        if self._lock.acquire(blocking=False):  # else the holder's next `take` keeps it
            try:
                self._keep_returned()
            finally:
                self._lock.release()

    def _keep_returned(self):
        """The returned buffers into `_kept`, largest first, within keep_bytes; under `_lock`."""
        while self._returned:
            self._kept.append(self._returned.pop())
        self._kept.sort(key=lambda b: b.nbytes, reverse=True)
        while sum(b.nbytes for b in self._kept) > self.keep_bytes:
            self._kept.pop(0)


#: The process's scratch memory, at most 256 MiB of freed buffers kept for reuse.
SCRATCH = Scratch(256 * 2**20)


#: Rows that grow (a model's kept rows) live as the first rows of buffers with room after them,
#: as a growing array does: `with_rows` writes the new rows there, copying only them, while the
#: rows kept are the last written (else, as after a shallow copy appended first, the rows move
#: to new buffers). By the id of the values' buffer: [rows, stored values] written; an entry
#: goes with its buffer. The buffers are twice the rows they are made for, of which only the
#: rows written take memory.
_ROOMS: dict = {}


def _base(a):
    """The array `a` is a view of, or `a`."""
    return a if a.base is None else a.base


def _stored(X) -> int:
    """The values a CSR matrix stores (0 for a dense array, whose rows are its only count)."""
    return X.nnz if sp.issparse(X) else 0


def _new_room(X, more_rows=0, more_stored=0) -> tuple:
    """New buffers (dense: the values; CSR: values, indices, pointers) holding X's rows first,
    with room for as many again and `more_*` besides (scipy copies a CSR view of less than
    half its buffers: a view of every row written never is one)."""
    n, rows = X.shape[0], 2 * (X.shape[0] + more_rows) + 1
    if not sp.issparse(X):
        buffers = (np.empty((rows, X.shape[1]), dtype=X.dtype if X.dtype.kind == "f" else np.float64),)
        buffers[0][:n] = X
    else:
        stored = 2 * (X.nnz + more_stored)
        index = np.int32 if max(stored, rows, X.shape[1]) < 2**31 else np.int64
        buffers = (np.empty(stored), np.empty(stored, dtype=index), np.empty(rows, dtype=index))
        buffers[0][:X.nnz], buffers[1][:X.nnz], buffers[2][:n + 1] = X.data, X.indices, X.indptr
    _ROOMS[id(buffers[0])] = [n, _stored(X)]
    weakref.finalize(buffers[0], _ROOMS.pop, id(buffers[0]), None)
    return buffers


def _view(buffers, n, like):
    """The first n rows of `buffers` (`_new_room`'s), as `like` is laid out."""
    if len(buffers) == 1:
        return buffers[0][:n]
    values, indices, pointers = buffers
    k = int(pointers[n])
    return type(like)((values[:k], indices[:k], pointers[:n + 1]), shape=(n, like.shape[1]))


def _room_of(kept, more_rows, more_stored):
    """The buffers whose first rows are `kept` when those are the last written and there is
    room for `more_*` after them, else None."""
    parts = (kept.data, kept.indices, kept.indptr) if sp.issparse(kept) else (kept,)
    buffers = tuple(_base(p) for p in parts)
    if _ROOMS.get(id(buffers[0])) != [kept.shape[0], _stored(kept)] or \
            buffers[-1].shape[0] < kept.shape[0] + more_rows + 1 or buffers[0].shape[0] < _stored(kept) + more_stored:
        return None
    return buffers


def with_rows(kept, X):
    """The rows `kept` then those of X (the same layout, validated), written after `kept` in
    its buffers where it is their last rows and they have room (`_ROOMS`), else into new ones."""
    n, m = kept.shape[0], X.shape[0]
    X = X.tocsr() if sp.issparse(X) else X
    buffers = _room_of(kept, m, _stored(X)) or _new_room(kept, m, _stored(X))
    if len(buffers) == 1:
        buffers[0][n:n + m] = X
    else:
        k = kept.nnz
        buffers[0][k:k + X.nnz], buffers[1][k:k + X.nnz] = X.data, X.indices
        buffers[2][n + 1:n + m + 1] = X.indptr[1:] + k
    _ROOMS[id(buffers[0])] = [n + m, _stored(kept) + _stored(X)]
    return _view(buffers, n + m, kept)


def growing_copy(X):
    """X (dense, or CSR) copied into the first rows of buffers with room after them, to which
    `with_rows` appends in place."""
    return _view(_new_room(X), X.shape[0], X)
