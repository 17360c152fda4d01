"""The SMO solver's loops on the host, in the compiled core (`svmkit._core.smo`); they see
plain arrays only.

Notation as in LIBSVM: the problem is min ½αᵀQα + pᵀα, yᵀα = Δ, 0 ≤ α ≤ U, with gradient
G = Qα + p. Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]) where kidx maps a variable to its data row.
The block solver (`inner_smo`) keeps its state in one object, `_core.smo.BlockSolver`, as
LIBSVM's Solver does: α, G, the bounds and the active set in slots, the rows of Q_BB gathered
as the pairs need them, and the Cholesky factor of its Newton steps.
"""

from __future__ import annotations

import numpy as np

from svmkit._arrays import SCRATCH, as_float64, as_indices
from svmkit._core import smo as _smo
from svmkit.solvers.smo._block import Block, InnerSettings

_INT64_MAX = int(np.iinfo(np.int64).max)


def _rows(store):
    return np.ascontiguousarray(store, dtype=np.float32)


def _in_place(a):
    """`a` itself when the core can write it, else a contiguous float64 copy to write back."""
    if a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.array(a, dtype=np.float64, order="C")


def update_gradient(G, store, pos, coef, kidx, y):
    """G_j += y_j Σ_b coef_b K(b, kidx_j) for every variable j, coef_b = y_b Δα_b; the kernel
    row of moved variable b is row pos[b] of `store`. G is updated in place."""
    out = _in_place(G)
    _smo.update_gradient(out, _rows(store), as_indices(pos), as_float64(coef), as_indices(kidx),
                         as_float64(y))
    if out is not G:
        G[...] = out


def inner_smo(block: Block, settings: InnerSettings) -> int:
    """LIBSVM's SMO, second-order selection (Fan, Chen & Lin 2005) and shrinking, on one block
    of variables, with Newton steps on the free variables when the pair updates have cost as
    much as one (see `InnerSettings` for when it stops). Updates `block.alpha` and `block.G` in
    place; returns the number of pair updates."""
    q = block.size
    if q == 0:
        return 0
    scratch = settings.scratch if settings.scratch is not None else np.empty((q, q), dtype=np.float32)
    solver = _smo.BlockSolver(_rows(block.store), as_indices(block.pos), as_indices(block.kidx),
                              as_float64(block.y), as_float64(block.U), as_float64(block.QD), scratch)
    stop = settings.stop.view(np.uint8) if settings.stop.dtype == np.bool_ else settings.stop
    alpha, G = _in_place(block.alpha), _in_place(block.G)
    n_iter = solver.solve(alpha, G, _smo.Settings(float(settings.eps), min(int(settings.max_iter), _INT64_MAX),
                                                  bool(settings.nu_mode), bool(settings.shrinking),
                                                  float(settings.limit)), stop)
    if alpha is not block.alpha:
        block.alpha[...] = alpha
    if G is not block.G:
        block.G[...] = G
    return n_iter


class BlockRows:
    """The kernel values among the variables the blocks of one solve have held, each row read
    once from its full-width kernel row (and extended by the columns of variables that joined
    since): a block's solve then gathers its Q rows from rows as wide as those variables, where
    gathering from a full-width row reads most of it whichever of its columns the block needs.
    At most `capacity` variables (their values capacity² float32); past it they start again
    from the block at hand. A block's values are held here whole, so its full-width rows need
    not be held at once (`take_computed`)."""

    #: Whether a block may have more variables than the row source holds rows (`take_computed`).
    holds_blocks = True

    def __init__(self, n: int, capacity: int):
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.var_of = np.empty(capacity, dtype=np.int64)
        self.col_of = np.empty(capacity, dtype=np.int64)
        self.filled = np.zeros(capacity, dtype=np.int64)
        self.count = 0
        self.values = SCRATCH.take((capacity, capacity), np.float32)

    def _place(self, ws, cols):
        """Slots for the variables of ws not held (all of ws when they start again): ws's slots
        and the positions in ws of the variables new here."""
        new = np.flatnonzero(self.slot_of[ws] < 0)
        if self.count + new.size > self.values.shape[0]:
            self.slot_of[self.var_of[:self.count]] = -1
            self.count = 0
            new = np.arange(ws.size)
        first, end = self.count, self.count + new.size
        self.slot_of[ws[new]] = np.arange(first, end)
        self.var_of[first:end], self.col_of[first:end] = ws[new], cols[new]
        self.filled[first:end] = 0
        self.count = end
        return self.slot_of[ws], new

    def _fill(self, slots, store, pos):
        _smo.fill_block_rows(self.values, self.filled, slots, _rows(store), as_indices(pos), self.col_of[:self.count])

    def take(self, ws, store, pos, cols):
        """(rows, their row of each variable of ws, its column there) for a `Block` of the
        variables ws, whose kernel rows are rows `pos` of `store`, at columns `cols`."""
        slots, _ = self._place(ws, cols)
        self._fill(slots, store, pos)
        return self.values, slots, slots

    def take_computed(self, ws, cols, cross):
        """`take` for a block whose rows the row source cannot hold at once: the values of the
        variables new here are computed between them and the held ones (`cross(a, b)`: K
        between the points of variables a and b), the others' at their columns being the same
        values by the kernel's symmetry. A block's new rows would cost as many kernel values
        as the points, of which it needs as many as the variables held."""
        slots, new = self._place(ws, cols)
        first, end = self.count - new.size, self.count
        self.values[first:end, :end] = cross(ws[new], self.var_of[:end])
        self.filled[first:end] = end
        behind = slots[self.filled[slots] < end]
        # slot t > s was filled past column s when it joined: row s's columns from `done` on are column s there
        for done in np.unique(self.filled[behind]):
            s = behind[self.filled[behind] == done]
            self.values[s[:, None], np.arange(done, end)] = self.values[done:end][:, s].T
            self.filled[s] = end
        return self.values, slots, slots

    def release(self) -> None:
        SCRATCH.give(self.values)
