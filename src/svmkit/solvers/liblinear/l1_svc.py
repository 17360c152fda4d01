"""Coordinate descent Newton for the L1-regularised L2-loss linear SVM (LIBLINEAR -s 5),
run by the compiled core (`svmkit._core.linear.l1_svc`).

    min_w ‖w‖₁ + Σ_i C_i max(0, 1 − y_i wᵀx_i)²

(Yuan, Chang, Hsieh & Lin 2010, JMLR 11, "A comparison of optimization methods and software
for large-scale L1-regularized linear classification", section 4.1.2 (CDN); Fan et al. 2008,
JMLR 9, appendix). One weight at a time in a random order: the one-variable problem's
second-order model with the L1 term gives a Newton direction, shortened by halving until the
sufficient decrease (σ = 0.01) holds, which a cheap upper bound of the loss's change usually
certifies without a pass over the column. Weights at 0 whose subgradient range holds 0 by a
margin are shrunk from later passes; the iteration stops when the summed violation of a pass
is at most `tol` times the first pass's, after a last pass over every weight. The x_i carry a
constant feature `bias` (LIBLINEAR's -B), penalised with w. The rules and constants are
LIBLINEAR 2.50's (linear.cpp, solve_l1r_l2_svc).
"""

from __future__ import annotations

import numpy as np

from svmkit._core import linear
from svmkit.solvers.liblinear.sparse_parts import with_constant


def l1_svc(X, bias: float, y, c, tol: float, max_iter: int, seed: int):
    """Minimise the problem above over the rows of X (dense or sparse) for labels y = ±1 and
    per-row costs c > 0. Returns (w: one weight per column, then the constant feature's (0
    when bias is 0); passes)."""
    values, rows, pointers = with_constant(X, bias, "csc")
    values *= np.asarray(y, dtype=np.float64)[rows]
    w = np.empty(pointers.size - 1)
    passes = linear.l1_svc(values, rows, pointers, np.ascontiguousarray(c, dtype=np.float64),
                           linear.Stop(tol, max_iter, seed), w)
    return (w if bias != 0.0 else np.append(w, 0.0)), passes
