"""One block of the SMO solver, as both block solvers take it: the host's (`_loops`, on the
compiled core) and the device's (`_cuda`).

Notation as in LIBSVM: the problem is min ½αᵀQα + pᵀα, yᵀα = Δ, 0 ≤ α ≤ U, with gradient
G = Qα + p. Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]) where kidx maps a variable to its data row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Block:
    """A block B of the dual's variables: the kernel row of variable s is row `pos[s]` of
    `store` (float32, K(x_kidx[s], ·) over all data points), its data row `kidx[s]`; `y`, `U`
    and `QD` (Q's diagonal) per variable. `alpha` and `G` (B's gradient, exact on entry;
    contiguous float64) are updated in place by a block solve."""

    store: np.ndarray
    pos: np.ndarray
    kidx: np.ndarray
    y: np.ndarray
    alpha: np.ndarray
    G: np.ndarray
    U: np.ndarray
    QD: np.ndarray

    @property
    def size(self) -> int:
        return int(self.y.shape[0])


@dataclass(frozen=True)
class InnerSettings:
    """What a block solve is asked: stop when the block's maximal violation is below `eps`,
    after `max_iter` pair updates, when an α passes `limit` (an unbounded dual), or when
    another thread sets `stop[0]` (an interrupted fit); `nu_mode`: LIBSVM's Solver_NU (pairs
    within a y-class); `shrinking`: LIBSVM's, within the block. `scratch`: the host's memory
    for the rows of Q_BB (float32, at least |B| × |B|; None: its own)."""

    eps: float
    max_iter: int
    nu_mode: bool
    shrinking: bool
    limit: float
    stop: np.ndarray
    scratch: np.ndarray | None = None
