"""The sequential dual method for Crammer and Singer's multi-class linear SVM (LIBLINEAR -s 4),
run by the compiled core (`svmkit._core.linear.crammer_singer`).

    min_α ½ Σ_m ‖w_m‖² + Σ_i Σ_m e_i^m α_i^m,   w_m = Σ_i α_i^m x_i,
    s.t. α_i^m ≤ C_i^m, Σ_m α_i^m = 0 for every i,

e_i^m = 0 and C_i^m = C_i when m = y_i, else e_i^m = 1 and C_i^m = 0: the dual of
min ½ Σ_m ‖w_m‖² + Σ_i C_i max_m (e_i^m + w_mᵀx_i − w_{y_i}ᵀx_i) (Crammer & Singer 2001, JMLR
2; Keerthi, Sundararajan, Chang, Hsieh & Lin 2008, KDD, "A sequential dual method for large
scale multi-class linear SVMs"; Fan et al. 2008, JMLR 9, appendix). One row's k variables at a
time in a random order, each sub-problem solved exactly by sorting; variables at their bound
with a gradient below the row's smallest free one are shrunk, and the iteration stops when the
largest gradient spread of a pass is below `tol` after a pass over every variable. The x_i
carry a constant feature `bias` (LIBLINEAR's -B), penalised with w. The rules and constants are
LIBLINEAR 2.50's (linear.cpp, Solver_MCSVM_CS).
"""

from __future__ import annotations

import numpy as np

from svmkit._core import linear
from svmkit.solvers.liblinear.sparse_parts import with_constant


def crammer_singer(X, bias: float, y, c, n_classes: int, tol: float, max_iter: int, seed: int):
    """Solve the dual above over the rows of X (dense or sparse) for class numbers y in
    0 … n_classes − 1 and per-row costs c > 0. Returns (W: one row of k weights per column of X,
    then the constant feature's (0 when bias is 0); α (n × k); passes)."""
    values, columns, pointers = with_constant(X, bias, "csr")
    # without the constant feature its row of W stays 0
    W, alpha = np.empty((X.shape[1] + 1, n_classes)), np.empty((X.shape[0], n_classes))
    stop = linear.Stop(tol, max_iter, seed)
    passes = linear.crammer_singer(values, columns, pointers, np.ascontiguousarray(y, dtype=np.int64),
                                   np.ascontiguousarray(c, dtype=np.float64), stop, W, alpha)
    return W, alpha, passes
