"""Where the solver's kernel rows come from: a bounded LRU cache or a full matrix.

A row source (`RowSource`) answers `fetch(idx)` with `(store, pos)`: row `pos[k]` of the 2-D
array `store` holds K(x_idx[k], ·) over all data points. The compiled loops read `store`
directly, so a one-vs-one class pair or a cross-validation fold reads the rows of one shared
kernel. `row_source` makes the right one for a kernel.
"""

from __future__ import annotations

import threading
import weakref
from typing import Protocol

import numpy as np

from svmkit._arrays import SCRATCH, to_host
from svmkit.kernels.device import PLACE_BYTES


#: Fewest rows a cache holds, however small `cache_size` is.
MIN_ROWS = 64
#: Rows fetched at once when a dense block is assembled.
_BLOCK_ROWS = 1024
#: Kernel values computed at once between the rows held and the points an update adds.
CROSS_ELEMENTS = 2**22
#: Kernel values widened to float64 at once by `row_products` and `CachedRows.products` (2 MB).
WIDENED_ELEMENTS = 2**18


class Kernel(Protocol):
    """What `CachedRows` needs of a kernel: its data rows `n`, their diagonal, a way to write
    the row of a column, and where its rows hold only the distinct points' columns,
    `n_columns` and `column_of` (see `RowSource`); `xp`, where given, is the array module of
    the device its rows are computed on: the cache is kept there."""

    n: int
    diag: np.ndarray

    def rows_into(self, cols: np.ndarray, out: np.ndarray, out_rows: np.ndarray) -> None:
        """Write the kernel rows of columns `cols` into rows `out_rows` of `out`, in its first
        columns (`out` may be wider)."""
        ...

    def exact_block(self, idx: np.ndarray) -> np.ndarray: ...

    def columns_block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """K between its columns `rows` and `cols`, float64 (host kernels, for updates)."""
        ...


class RowSource(Protocol):
    """Kernel rows K(x_i, ·) over all `n` data points, as float32: K(x_i, x_j) at column
    `column_of[j]` of the row (a column per distinct point), or at column j where `column_of`
    is None (`columns(rows, j)`).

    `diag`: K(x_i, x_i) in float64 (on the host); `capacity`: rows one `fetch` may ask for
    (the solver sizes its working sets to it); `computed_rows`: rows computed so far;
    `concurrent`: whether several threads may fetch at once (no row is ever evicted, so rows
    a thread got stay valid while another fetches); `carries_over`: whether `updated` may
    carry the rows over to changed data rows; `xp`: the array module of `store` (NumPy,
    or CuPy for rows kept on a GPU, whose `CachedRows.fetch` takes indices of either; `pos` is
    on the host).
    """

    n: int
    diag: np.ndarray
    column_of: np.ndarray | None
    xp: object
    capacity: int
    computed_rows: int
    concurrent: bool
    carries_over: bool

    def fetch(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`(store, pos)`: row `pos[k]` of `store` is K(x_idx[k], ·); valid until the next fetch."""
        ...

    def held(self, idx: np.ndarray) -> np.ndarray:
        """Whether the row of each data row idx[k] is held (its fetch computes nothing)."""
        ...

    def narrowed(self, idx: np.ndarray) -> tuple[RowSource, np.ndarray] | None:
        """(a source of the rows over the points of data rows idx only, the data row there of
        each idx[k]), in no more memory than this one, which releases its rows to make room
        (`release`); None where its kernel cannot be narrowed."""
        ...

    def release(self) -> None:
        """Give back the memory of the rows held (they are computed again when asked for)."""
        ...

    def block(self, idx: np.ndarray) -> np.ndarray:
        """The dense float64 matrix K[idx][:, idx] of the stored (float32) rows."""
        ...

    def exact_block(self, idx: np.ndarray) -> np.ndarray:
        """K[idx][:, idx] computed in float64 from the data, for the feasibility tests: rounding
        to float32 gives a low-rank kernel (linear, few features) full rank, on which any
        labelling looks separable."""
        ...

    def products(self, idx: np.ndarray, coef: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Σ_k coef[k] K(x_idx[k], x_cols[j]) for every j, float64, without computing whole
        rows (on the host)."""
        ...

    def exact_cross(self, idx: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """K[idx][:, cols] computed in float64 from the data (on the host)."""
        ...

    def updated(self, earlier_row: np.ndarray, added) -> RowSource | None:
        """The rows of the same kernel on changed data rows (data row i being row
        earlier_row[i] here, or, −1, the next row of `added`), holding the rows held here;
        None where they cannot be carried over."""
        ...


def columns(rows: RowSource, idx):
    """The columns of the rows of `rows` that hold data points idx."""
    return idx if rows.column_of is None else rows.xp.asarray(rows.column_of)[idx]


def rows_block(rows: RowSource, idx: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """K[idx][:, cols] in float64 on the host from any row source, fetched a bounded number of
    rows at a time."""
    idx, cols = np.asarray(idx, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    out = np.empty((idx.size, cols.size))
    step = min(_BLOCK_ROWS, rows.capacity)
    cols_there = rows.xp.asarray(columns(rows, cols))
    for s in range(0, idx.size, step):
        store, pos = rows.fetch(idx[s:s + step])
        out[s:s + step] = to_host(store[rows.xp.ix_(rows.xp.asarray(pos), cols_there)])
    return out


def dense_block(rows: RowSource, idx: np.ndarray) -> np.ndarray:
    """K[idx][:, idx] in float64 from any row source, fetched a bounded number of rows at a time."""
    return rows_block(rows, idx, idx)


def row_source(kernel: Kernel | None = None, cache_size: float = 0.0, matrix: np.ndarray | None = None,
               min_rows: int = MIN_ROWS, room: int = 0, xp=np) -> RowSource:
    """The row source of a kernel: every row of a given kernel `matrix` (a precomputed kernel,
    on the host; kept in float32 where the arrays of `xp` live), else the rows of `kernel`
    computed on demand into a cache of `cache_size` MB that holds at least `min_rows` rows,
    with `room` columns to spare in each (`CachedRows`)."""
    if matrix is not None:
        return FullRows(matrix, np.diag(matrix).astype(np.float64), xp)
    return CachedRows(kernel, cache_size, min_rows, room)


def placed_float32(xp, K) -> np.ndarray:
    """K (on the host) as a C-ordered float32 array of `xp`: on a device, sent by blocks of rows
    rounded on the host (as much as the data is placed by at once, `PLACE_BYTES`), so that no
    float32 copy of the whole of K is made there."""
    if xp is np:
        return np.ascontiguousarray(K, dtype=np.float32)
    n, m = K.shape
    out = xp.empty((n, m), dtype=np.float32)
    step = max(1, PLACE_BYTES // max(4 * m, 1))
    for lo in range(0, n, step):
        out[lo:lo + step] = xp.asarray(np.asarray(K[lo:lo + step], dtype=np.float32))
    return out


class FullRows:
    """Every row is already in memory (a precomputed kernel matrix), kept in float32 as
    every kernel row is (LIBSVM's precision), so that a kernel gives the same α whichever
    way it arrives; on the device of `xp` (CuPy) when given, where the solver then runs, the
    matrix as given staying on the host for `exact_block`."""

    column_of = None
    carries_over = False

    def __init__(self, K: np.ndarray, diag: np.ndarray, xp=np):
        self.given = K
        self.store = placed_float32(xp, K)
        self.diag = diag
        self.n = K.shape[0]
        self.capacity = self.n
        self.computed_rows = 0
        self.concurrent = True
        self.xp = xp

    def fetch(self, idx: np.ndarray):
        return self.store, np.asarray(idx, dtype=np.int64)

    def held(self, idx: np.ndarray) -> np.ndarray:
        return np.ones(np.shape(idx), dtype=bool)

    block = dense_block

    def exact_block(self, idx: np.ndarray) -> np.ndarray:
        return self.exact_cross(idx, idx)

    def exact_cross(self, idx: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return np.asarray(self.given[np.ix_(idx, cols)], dtype=np.float64)

    def updated(self, earlier_row, added) -> None:
        """None: a given matrix has no rows for new data."""
        return None

    def narrowed(self, idx) -> None:
        """None: every row is held already."""
        return None

    def release(self) -> None:
        """Nothing to give back: the matrix is the caller's."""

    def products(self, idx: np.ndarray, coef: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return row_products(self, idx, coef, cols)


class CachedRows:
    """Kernel rows computed in blocks on demand and kept in float32, least recently used evicted,
    one slot per kernel column (equal data points share one, computed once).

    `cache_size` bounds the store in MB; it holds at least `min_rows` rows. The solver sizes
    its working sets to `capacity`. The store is kept where the kernel computes its rows; its
    rows have `room` columns beyond the kernel's, for points an update adds (`updated`).
    `narrowable`: whether a problem on a subset of the rows may be given a source of its own,
    over those rows' columns only (set by the backend that made it; see
    `backend.CudaBackend.problem_rows`).
    """

    narrowable = False

    def __init__(self, kernel: Kernel, cache_size: float, min_rows: int = MIN_ROWS, room: int = 0):
        self.kernel = kernel
        self.cache_size, self.min_rows = cache_size, min_rows
        self.n = kernel.n
        self.diag = kernel.diag
        self.column_of = getattr(kernel, "column_of", None)
        self.xp = getattr(kernel, "xp", np)
        room = room if self.xp is np else 0
        self.width = getattr(kernel, "n_columns", self.n) + room
        # a cache_size of 1e308 MB is inf bytes: every row fits, the added points' too
        budget_rows = int(min(cache_size * 2**20 / (4 * max(self.width, 1)), self.n + room))
        self.capacity = int(min(self.n + room, max(budget_rows, min_rows, 2)))
        self._give = None
        self.store = None
        if self.xp is np:
            self._take_store()
        self.slot_of = np.full(self.width, -1, dtype=np.int64)
        self.owner = np.full(self.capacity, -1, dtype=np.int64)
        self.last_used = np.zeros(self.capacity, dtype=np.int64)
        self.clock = 0
        self.n_used = 0
        self.computed_rows = 0
        self.concurrent = self.capacity >= self.n
        # host rows of a kernel that can follow changed data rows: a device's would hold its memory
        self.carries_over = self.xp is np and hasattr(kernel, "updated")
        if room and self.carries_over:
            kernel.grow_in_place()
        self._lock = threading.Lock()

    def _take_store(self) -> None:
        """The store's memory: on the host from the pool, handed back when the source goes; on
        a device at the first fetch, so that a device source whose problems each get a narrower
        one of their own (one-vs-one pairs) never holds it."""
        if self.xp is np:
            self.store = SCRATCH.take((self.capacity, self.width), np.float32)
            self._give = weakref.finalize(self, SCRATCH.give, self.store)
        else:
            self.store = self.xp.empty((self.capacity, self.width), dtype=np.float32)

    def release(self) -> None:
        with self._lock:
            if self._give is not None:
                self._give()
            self.store, self._give = None, None
            self.slot_of[:] = -1
            self.owner[:] = -1
            self.n_used = 0

    def narrowed(self, idx: np.ndarray):
        """The rows of the kernel restricted to the points of data rows idx (`restricted`), in a
        cache of the same `cache_size`, this source's rows released meanwhile; None for a kernel
        that cannot be restricted (a device's)."""
        restrict = getattr(self.kernel, "restricted", None)
        if restrict is None:
            return None
        at = self._columns(idx)
        points, where = np.unique(at, return_inverse=True)
        self.release()
        return CachedRows(restrict(points), self.cache_size, self.min_rows), where.astype(np.int64)

    def fetch(self, idx: np.ndarray):
        with self._lock:
            return self._fetch(self._columns(idx))

    def held(self, idx: np.ndarray) -> np.ndarray:
        return self.slot_of[self._columns(idx)] >= 0

    def _columns(self, idx) -> np.ndarray:
        """The kernel columns of data rows idx, on the host."""
        idx = np.asarray(to_host(idx), dtype=np.int64)
        return idx if self.column_of is None else self.column_of[idx]

    def _fetch(self, cols: np.ndarray):
        self.clock += 1
        slots = self.slot_of[cols]
        missing = np.flatnonzero(slots < 0)
        if self.store is None:
            self._take_store()
        if missing.size:
            miss = np.unique(cols[missing])
            new_slots = self._claim(miss.size, protect=slots[slots >= 0])
            old = self.owner[new_slots]
            self.slot_of[old[old >= 0]] = -1
            self.owner[new_slots] = miss
            self.slot_of[miss] = new_slots
            self.kernel.rows_into(miss, self.store, new_slots)
            self.computed_rows += miss.size
            slots = self.slot_of[cols]
        self.last_used[slots] = self.clock
        return self.store, slots

    block = dense_block

    def exact_block(self, idx: np.ndarray) -> np.ndarray:
        return self.kernel.exact_block(idx)

    def exact_cross(self, idx: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return self.kernel.columns_block(self._columns(idx), self._columns(cols))

    def updated(self, earlier_row: np.ndarray, added) -> CachedRows | None:
        """The rows of the kernel `kernel.updated` makes for changed data rows (data row i being
        data row earlier_row[i] here, or, −1, the next row of `added`), in this store, which it
        takes over: the rows held here keep their values at the earlier columns, the columns of
        added points are computed for them. None (nothing taken) where they cannot be carried
        over (`carries_over`), when the added points need more than the room left, when a
        quarter of the columns would belong to no data row (forgotten rows' points), so that a
        fresh store drops them, or when the kernel cannot give them (`kernel.updated`)."""
        if not self.carries_over or self.store is None:
            return None
        kernel = self.kernel.updated(earlier_row, added)
        if kernel is None:
            return None
        used = np.zeros(kernel.n_columns, dtype=bool)
        used[np.arange(kernel.n) if kernel.column_of is None else kernel.column_of] = True
        if kernel.n_columns > self.width or 4 * np.count_nonzero(~used) > kernel.n_columns:
            return None
        rows = object.__new__(CachedRows)
        vars(rows).update(vars(self))
        rows.kernel, rows.n, rows.diag, rows.column_of = kernel, kernel.n, kernel.diag, kernel.column_of
        rows.concurrent = rows.capacity >= rows.n
        rows._lock = threading.Lock()
        # the store is the new source's now: this one gives it back to the pool no more
        self._give.detach()
        rows._give = weakref.finalize(rows, SCRATCH.give, rows.store)
        self.store, self._give = None, None
        self.slot_of = np.full(self.width, -1, dtype=np.int64)
        self.n_used = 0
        rows._add_columns(getattr(self.kernel, "n_columns", self.n))
        return rows

    def _add_columns(self, earlier: int) -> None:
        """The values at the columns from `earlier` on (points an update added) of the rows held:
        from the added points' own rows, computed and held first (the same values, K being
        symmetric), where whole rows are the cheaper (`fast_rows`) or the rows held are at
        least half the columns (whole rows then cost at most twice the values needed, from
        the kernel's columns as prepared); else from the kernel between the held rows' points
        and the added ones (`columns_block`), leaving the added points' rows, which the solve
        may never read, uncomputed."""
        new = np.arange(earlier, self.kernel.n_columns)
        if getattr(self.kernel, "fast_rows", False) or 2 * np.count_nonzero(self.owner >= 0) >= self.kernel.n_columns:
            step = max(1, self.capacity // 2)
            for s in range(0, new.size, step):
                cols = new[s:s + step]
                _, pos = self._fetch(cols)
                held = np.flatnonzero((self.owner >= 0) & (self.owner < earlier))
                # the held rows' values at the new columns are the new rows' at the held ones
                self.store[held, cols[0]:cols[-1] + 1] = self.store[np.ix_(pos, self.owner[held])].T
            return
        held = np.flatnonzero(self.owner >= 0)
        step = max(1, CROSS_ELEMENTS // max(new.size, 1))
        for s in range(0, held.size, step):
            slots = held[s:s + step]
            self.store[slots, earlier:self.kernel.n_columns] = self.kernel.columns_block(self.owner[slots], new)

    def products(self, idx: np.ndarray, coef: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Σ_k coef[k] K(x_idx[k], x_cols[j]) for every j (a row per j, a column per column of
        coef), in float64. From the rows of idx when they are the fewer, or when the rows cannot
        be carried over (a device's: `row_products`); else without computing whole rows: from
        the held rows of cols (each a dot product with coef spread over the kernel's columns: no
        gather), else from the held rows of idx at cols' columns, else from the kernel's block
        (`columns_block`)."""
        at, there = columns(self, np.asarray(idx, dtype=np.int64)), columns(self, np.asarray(cols, dtype=np.int64))
        if not self.carries_over or at.size <= there.size:
            return row_products(self, idx, coef, cols)
        width = self.kernel.n_columns
        out = np.empty((there.size, coef.shape[1]))
        slots = self.slot_of[there]
        held = np.flatnonzero(slots >= 0)
        if held.size:
            spread = np.zeros((width, coef.shape[1]))
            np.add.at(spread, at, coef)
            # rows widened one at a time into a small reused buffer: a fresh temporary's pages
            # cost more than the products
            step = max(1, min(held.size, WIDENED_ELEMENTS // max(width, 1)))
            wide = SCRATCH.take((step, width), np.float64)
            for s in range(0, held.size, step):
                part = held[s:s + step]
                for r, slot in enumerate(slots[part]):
                    wide[r] = self.store[slot, :width]
                out[part] = wide[: part.size] @ spread
            SCRATCH.give(wide)
        rest = np.flatnonzero(slots < 0)
        if rest.size:
            by_row = self.slot_of[at]
            kept = by_row >= 0
            out[rest] = (coef[kept].T @ _at_columns(self.store, by_row[kept], there[rest])).T
            if not kept.all():
                out[rest] += (coef[~kept].T @ self.kernel.columns_block(at[~kept], there[rest])).T
        return out

    def _claim(self, k: int, protect: np.ndarray) -> np.ndarray:
        free = self.capacity - self.n_used
        if free >= k:
            s = np.arange(self.n_used, self.n_used + k)
            self.n_used += k
            return s
        fresh = np.arange(self.n_used, self.capacity)
        self.n_used = self.capacity
        age = self.last_used.copy()
        age[protect] = np.iinfo(np.int64).max
        age[fresh] = np.iinfo(np.int64).max
        victims = np.argpartition(age, k - fresh.size - 1)[: k - fresh.size]
        return np.concatenate([fresh, victims])


def _at_columns(store: np.ndarray, slots: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """store[slots][:, cols] without whole rows: through the span of cols, a slice each row
    reads in order, when the span is at most twice their number (an update's points are
    adjacent columns), else element by element."""
    lo, hi = int(cols.min(initial=0)), int(cols.max(initial=-1)) + 1
    if hi - lo > 2 * cols.size:
        return store[np.ix_(slots, cols)]
    return store[slots, lo:hi][:, cols - lo]


def row_products(rows: RowSource, idx: np.ndarray, coef: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Σ_k coef_k K(x_idx[k], x_cols[j]) for every j, in float64 (coef 1-D, or 2-D: a column
    of the result per column of coef), from the rows of `idx` fetched a bounded number at a
    time, each block of at most WIDENED_ELEMENTS values (a fresh temporary's pages cost more
    than the products); a repeated index adds its coefficients first."""
    idx, inv = np.unique(np.asarray(idx, dtype=np.int64), return_inverse=True)
    coef = np.asarray(coef, dtype=np.float64)
    summed = np.zeros((idx.size,) + coef.shape[1:])
    np.add.at(summed, inv.ravel(), coef)
    out = np.zeros((np.size(cols),) + coef.shape[1:])
    step = max(1, min(_BLOCK_ROWS, rows.capacity, WIDENED_ELEMENTS // max(np.size(cols), 1)))
    for s in range(0, idx.size, step):
        out += (summed[s:s + step].T @ rows_block(rows, idx[s:s + step], cols)).T
    return out
