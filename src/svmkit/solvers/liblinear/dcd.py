"""Dual coordinate descent for linear SVMs (Hsieh et al. 2008; Ho & Lin 2012), LIBLINEAR's
method, run by the compiled core (`svmkit._core.linear`) on plain arrays.

Classification (the soft-margin SVM is L2-regularised hinge loss; the dual as Hsieh et al. 2008, (4)):

    min_α ½ αᵀ(Q + D)α − 1ᵀα,  0 ≤ α_i ≤ U_i,  Q_ij = y_i y_j x_iᵀx_j,

hinge loss: U_i = C_i, D_ii = 0; squared hinge: U_i = ∞, D_ii = 1/(2C_i); w = Σ y_i α_i x_i.
Regression (ε-insensitive loss), with β_i = α_i − α*_i:

    min_β ½ βᵀ(Q + D)β − yᵀβ + ε‖β‖₁,  −U_i ≤ β_i ≤ U_i,  Q_ij = x_iᵀx_j, w = Σ β_i x_i,

with U, D as above. One coordinate at a time in a random order, with LIBLINEAR's shrinking;
the intercept, when asked for, is the weight of a constant feature `bias` (regularised, as
LIBLINEAR's -B). Rows are a dense array or CSR; the loops release the GIL.

The per-row constants (y_i for classification, U_i, D_ii) come as small tables indexed by a
per-row group number, as LIBLINEAR indexes its bounds by class: a random-order pass waits on
every cache line it touches, and rows with equal constants (all of them, per class, without
sample weights) then share one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import row_norms

from svmkit._core import linear
from svmkit._core.linear import Stop


def _narrowest(values, narrow, wide):
    """`values` as `narrow` when that holds every value exactly (binary features, column
    numbers below 2³¹), else as `wide`: fewer bytes per nonzero for the random-order passes to
    wait on, the same numbers."""
    cast = values.astype(narrow)
    return cast if np.array_equal(cast, values) else values.astype(wide)


def _parts(X):
    """(dense, data, indices, indptr) for the loops: a C-ordered float64 array and no CSR parts,
    or None and the CSR parts, `data` None when every stored value is 1."""
    if sp.issparse(X):
        X = X.tocsr()
        # int32 column numbers are nonnegative: their uint32 view is exact, with no copy
        indices = X.indices.view(np.uint32) if X.indices.dtype == np.int32 else \
            _narrowest(X.indices, np.uint32, np.uint64)
        data = None if np.all(X.data == 1.0) else _narrowest(X.data, np.float32, np.float64)
        return None, data, indices, X.indptr.astype(np.uint64)
    return np.ascontiguousarray(X, dtype=np.float64), None, None, None


def row_layout(X, bias: float):
    """X's rows (x_i, bias) in the core's layout (`svmkit._core.linear.Rows`)."""
    return _layout(_parts(X), X.shape[1], bias)


def _layout(parts, n_features: int, bias: float):
    """The core's rows over `_parts`' arrays (kept, not copied)."""
    dense, data, indices, indptr = parts
    if dense is not None:
        return linear.dense_rows(dense, float(bias))
    if data is None:
        return linear.pattern_rows(indices, indptr, n_features, float(bias))
    return linear.csr_rows(data, indices, indptr, n_features, float(bias))


def _tables(X, groups, classifying):
    """The dual's per-row tables: ‖x_i‖², and row_groups' (group, [y,] U, D)."""
    group, *constants = groups
    sign, upper, diag = constants if classifying else (np.zeros(0), *constants)
    return linear.RowTables(row_norms(X, squared=True), group, upper, diag, sign)


def _variables(n, stop: Stop, start):
    """(the dual variables' array, the stop): from 0, or warm from `start` (feasible: within
    the bounds), which the core reads, building w = Σ_i y_i start_i x_i from it."""
    if start is None:
        return np.empty(n), stop
    return np.array(start, dtype=np.float64), Stop(stop.tol, stop.max_iter, stop.seed, start=True)


def dcd_classify(X, bias, groups, stop: Stop, start=None):
    """Solve the classification dual over the rows of X (dense or CSR); `groups` is
    row_groups(y, U, D): row i has y_i = sign[group[i]], U_i = upper[group[i]],
    D_ii = diag[group[i]]. Returns (w (one entry per column of X, then the bias weight), α,
    passes). Stops when the projected gradient's spread over a full pass is ≤ stop.tol.
    `start`: α to start from (0 ≤ α_i ≤ U_i), else 0."""
    w, (alpha, stop) = np.empty(X.shape[1] + 1), _variables(X.shape[0], stop, start)
    passes = linear.dcd_classify(row_layout(X, bias), _tables(X, groups, True), stop, w, alpha)
    return w, alpha, passes


def dcd_regress(X, bias, y, groups, epsilon, stop: Stop, start=None):
    """Solve the regression dual over the rows of X; `groups` is row_groups(U, D): row i has
    U_i = upper[group[i]], D_ii = diag[group[i]]. Returns (w, β, passes). Stops when the pass's
    summed violation is ≤ stop.tol times the first pass's (LIBLINEAR's rule). `start`: β to
    start from (|β_i| ≤ U_i), else 0."""
    w, (beta, stop) = np.empty(X.shape[1] + 1), _variables(X.shape[0], stop, start)
    y = np.ascontiguousarray(y, dtype=np.float64)
    passes = linear.dcd_regress(row_layout(X, bias), _tables(X, groups, False), y, float(epsilon), stop, w, beta)
    return w, beta, passes


def row_groups(*constants):
    """Rows with equal per-row constants share a group: the group number per row (int32),
    then one table per argument holding each group's value."""
    group = np.zeros(constants[0].size, dtype=np.int64)
    first = np.zeros(min(1, group.size), dtype=np.int64)
    varying = [values for values in constants if not (values == values[0]).all()]  # none without weights
    if len(varying) == 1 and _two_valued(varying[0]):  # labels ±1: no sort
        group = varying[0] != varying[0][0]
        first = np.array([0, np.argmax(group)])
    else:
        for values in varying:
            levels, level = np.unique(values, return_inverse=True)
            _, first, group = np.unique(group * levels.size + level, return_index=True, return_inverse=True)
    return (group.ravel().astype(np.int32), *(np.ascontiguousarray(values[first]) for values in constants))


def _two_valued(values):
    """Whether `values` holds exactly two distinct values (given that it holds more than one)."""
    rest = values[values != values[0]]
    return bool((rest == rest[0]).all())
