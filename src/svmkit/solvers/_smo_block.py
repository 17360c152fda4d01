"""The state of one SMO block: its variables in slots, and the rows of Q_BB gathered for them.

The active variables (not shrunk) are slots 0..m-1, as in LIBSVM, so every loop of an
iteration runs over contiguous memory. Notation as in `_smo_loops`.
"""

from collections import namedtuple

from numba import njit

from svmkit._compiled import NO_REFCOUNT

#: Per slot: y, alpha, G, U, QD, kidx, pos (row of `store`), var (the block's variable in the
#: slot), alpha0 and G0 (α and G at entry, from which `_reconstruct` rebuilds shrunk gradients).
#: Then the Q rows: Qs (their storage), row_of (storage row of each slot, −1: none), row_len
#: (valid prefix of each storage row), rows_used ([n]: storage rows in use), and the kernel store.
BlockState = namedtuple("BlockState", ["y", "alpha", "G", "U", "QD", "kidx", "pos", "var", "alpha0", "G0",
                                       "Qs", "row_of", "row_len", "rows_used", "store"])


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def qrow(st, s, m):
    """The storage row (of st.Qs) holding row s of Q_BB over slots 0..m-1, gathered from the
    kernel store on first need; its number, not a view, as a helper without reference counting
    returns no new array.

    A storage row stays valid on a prefix of slots (`_shrink` truncates it after swaps).
    """
    y, kid, ps, row_of, row_len, used = st.y, st.kidx, st.pos, st.row_of, st.row_len, st.rows_used
    r = row_of[s]
    if r < 0:
        r = used[0]
        used[0] += 1
        row_of[s] = r
        row_len[r] = 0
    L = row_len[r]
    row = st.Qs[r]
    if L < m:
        src = st.store[ps[s]]
        ys = y[s]
        for t in range(L, m):
            row[t] = ys * y[t] * src[kid[t]]
        if s >= L:
            row[s] = st.QD[s]
        row_len[r] = m
    return r


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def _exchange(arr, a, b):
    arr[a], arr[b] = arr[b], arr[a]


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def swap(st, a, b):
    """Exchange slots a < b. Stored Q rows keep their columns; `_shrink` truncates them."""
    _exchange(st.y, a, b)
    _exchange(st.alpha, a, b)
    _exchange(st.G, a, b)
    _exchange(st.U, a, b)
    _exchange(st.QD, a, b)
    _exchange(st.kidx, a, b)
    _exchange(st.pos, a, b)
    _exchange(st.var, a, b)
    _exchange(st.alpha0, a, b)
    _exchange(st.G0, a, b)
    _exchange(st.row_of, a, b)
