"""Kernel blocks and training rows against scikit-learn's pairwise_kernels, on dense data, CSR
data through the plain scatter, and CSR data through the split (BLAS + scatter) path."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

import svmkit
from conftest import heart_scale
from svmkit.kernels.gram import SparseColumns, TrainingKernel, first_equal_rows, kernel_block, kernel_diag
from svmkit.kernels.kinds import make_kernel

KERNELS = [("linear", {}), ("poly", dict(gamma=0.3, degree=3, coef0=1.0)), ("rbf", dict(gamma=0.2)),
           ("sigmoid", dict(gamma=0.05, coef0=-0.5))]


def _data():
    X, _ = heart_scale()
    return sp.csr_matrix(X[:120]), sp.csr_matrix(X[120:170])


def _spec(name, params, X):
    return make_kernel(name, X, params.get("gamma", "scale"), params.get("degree", 3), params.get("coef0", 0.0))


@pytest.mark.parametrize("name, params", KERNELS)
@pytest.mark.parametrize("layout", ["dense", "csr", "csr split"])
def test_kernel_block_equals_pairwise_kernels(name, params, layout):
    B, A = _data()
    spec = _spec(name, params, B)
    expected = pairwise_kernels(A.toarray(), B.toarray(), metric=name, **params)
    if layout == "dense":
        got = kernel_block(spec, A.toarray(), B.toarray())
    else:
        split = SparseColumns(B, dense_fraction=0.18 if layout == "csr split" else np.inf)
        assert (split.dense_cols.size > 0) == (layout == "csr split")
        got = kernel_block(spec, A, B, b_split=split)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, params", KERNELS)
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_training_rows_and_diagonal_equal_pairwise_kernels(name, params, layout):
    X, _ = _data()
    Xk = X.toarray() if layout == "dense" else X
    spec = _spec(name, params, Xk)
    kernel = TrainingKernel(spec, Xk)
    idx = np.array([3, 0, 99, 41])
    out = np.zeros((idx.size, X.shape[0]), dtype=np.float32)
    kernel.rows_into(idx, out, np.arange(idx.size))
    expected = pairwise_kernels(X.toarray(), metric=name, **params)
    np.testing.assert_allclose(out, expected[idx], rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(kernel_diag(spec, Xk), np.diag(expected), rtol=1e-12)


def test_callable_kernel_diagonal_is_taken_in_blocks():
    X, _ = _data()
    calls = []

    def kernel(A, B):
        calls.append(A.shape[0])
        return pairwise_kernels(A, B, metric="rbf", gamma=0.1)

    diag = kernel_diag(make_kernel(kernel, X), X.toarray())
    np.testing.assert_allclose(diag, np.ones(X.shape[0]))
    assert len(calls) < X.shape[0]


def test_float32_training_rows_give_identical_rows_a_kernel_of_exactly_one():
    """A float32 GEMM leaves ||a||² + ||b||² − 2<a, b> of identical rows at rounding (K ≈
    1 − 1e−5 at γ = 8 here); those values are recomputed in float64 and equal 1, as the
    diagonal, and the rest stay within float32 GEMM accuracy of the float64 kernel."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (40, 30))
    X = np.vstack([X, X[:5]])
    spec = make_kernel("rbf", X, 8.0 / 30)
    kernel = TrainingKernel(spec, X)
    out = np.empty((X.shape[0], kernel.n_columns), dtype=np.float32)
    kernel.rows_into(kernel.column_of, out, np.arange(X.shape[0]))  # a row is asked for by its point's column
    out = out[:, kernel.column_of]
    same = np.all(X[:, None, :] == X[None, :, :], axis=2)
    assert same.sum() == X.shape[0] + 10
    assert (out[same] == 1.0).all()
    np.testing.assert_allclose(out, pairwise_kernels(X, metric="rbf", gamma=8.0 / 30), atol=1e-5)


@pytest.mark.parametrize("name, params", [("rbf", {"gamma": 0.3}), ("poly", {"gamma": 0.5, "coef0": 1.0, "degree": 3}),
                                          ("sigmoid", {"gamma": 0.05, "coef0": 0.2}), ("linear", {})])
@pytest.mark.parametrize("n_centres", [0, 7, 1500])
def test_dense_products_tiles_equal_the_kernel_matrix_times_w(name, params, n_centres):
    """Tiles of 64 rows × 1,024 centres, the last ones partial, sum to K(X, C) W."""
    from svmkit.kernels.gram import dense_products, row_sq_norms

    rng = np.random.default_rng(0)
    X, C, W = rng.normal(size=(130, 6)), rng.normal(size=(n_centres, 6)), rng.normal(size=(n_centres, 3))
    spec = make_kernel(name, X, params.get("gamma", "scale"), params.get("degree", 3), params.get("coef0", 0.0))
    out = dense_products(X, row_sq_norms(X), C, row_sq_norms(C), spec, W)
    expected = pairwise_kernels(X, C, metric=name, **params) @ W if n_centres else np.zeros((130, 3))
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_first_equal_rows_points_each_row_at_its_earliest_copy():
    X = np.array([[1.0, 2.0], [3.0, 0.0], [1.0, 2.0], [0.0, 3.0], [3.0, 0.0], [1.0, 2.0], [2.0, 1.0]])
    assert first_equal_rows(X).tolist() == [0, 1, 0, 3, 1, 0, 6]
    assert first_equal_rows(X[[0, 1, 3, 6]]) is None
    # -0.0 and 0.0 project alike; rows are compared bit for bit, so they stay apart
    assert first_equal_rows(np.array([[0.0, 1.0], [-0.0, 1.0], [0.0, 1.0]])).tolist() == [0, 1, 0]


@pytest.mark.parametrize("features", [13, 30])
def test_rows_of_equal_points_share_one_cache_slot_and_hold_their_columns_once(features):
    """13 features: rows from the differences; 30: a float32 GEMM. Either way a row is computed
    over the distinct points, and a data row's value is read at its point's column."""
    from svmkit.solvers.smo.row_source import CachedRows, columns, rows_block

    X = np.random.default_rng(0).normal(size=(200, features))
    X = np.vstack([X, X[:30], X[5:8]])
    rows = CachedRows(TrainingKernel(make_kernel("rbf", X, 0.02), X), cache_size=1.0)
    assert rows.store.shape[1] == 200
    store, pos = rows.fetch(np.array([3, 203, 5, 230]))  # rows 203 and 230: copies of 3 and 5
    assert pos[0] == pos[1] != pos[2] == pos[3]
    assert rows.computed_rows == 2
    expected = pairwise_kernels(X[3:4], X, metric="rbf", gamma=0.02)[0]
    np.testing.assert_allclose(store[pos[1]][columns(rows, np.arange(X.shape[0]))], expected, atol=1e-6)
    everything = np.arange(X.shape[0])
    np.testing.assert_allclose(rows_block(rows, everything, everything), pairwise_kernels(X, metric="rbf", gamma=0.02),
                               atol=1e-6)


def _points(features, sparse, n=120, seed=3):
    rng = np.random.default_rng(seed)
    if sparse:
        X = sp.random(n, features, density=0.03, format="csr", random_state=seed, dtype=np.float64)
        X.sort_indices()
        return X, lambda rows: sp.vstack(rows, format="csr")
    return rng.normal(size=(n, features)), np.vstack


@pytest.mark.parametrize("features, sparse", [(13, False), (30, False), (400, True)])
def test_updated_rows_hold_the_values_of_rows_made_afresh(features, sparse):
    """13 features: rows from the differences; 30: a float32 GEMM; 400 sparse: the scatter. An
    update's source takes the earlier store over: rows held keep their values at the earlier
    points (a forgotten row's point stays a column, so its copy added later reads it), the
    added points' columns are computed, and only added points no column equals get rows,
    written after the earlier points' in their buffers."""
    from svmkit.solvers.smo.row_source import CachedRows, columns, rows_block

    X, stack = _points(features, sparse)
    X = stack([X, X[:4]])  # copies among the earlier rows
    spec = make_kernel("rbf", X, 0.5 / features)
    rows = CachedRows(TrainingKernel(spec, X), cache_size=1.0, room=8)
    earlier = np.arange(X.shape[0])
    rows.fetch(earlier)
    store, computed = rows.store, rows.computed_rows
    gone = np.array([2, 7, 50])
    fresh, _ = _points(features, sparse, n=3, seed=5)
    added = stack([fresh, X[[4]], X[[7]], fresh[[1]]])  # new points, a kept row's copy, a forgotten row's
    earlier_row = np.r_[np.setdiff1d(earlier, gone), [-1] * added.shape[0]]
    given = rows.kernel.given
    updated = rows.updated(earlier_row, added)
    assert updated.store is store and rows.store is None
    # the added points are written after the earlier ones, which are not copied
    values = (lambda a: a.data) if sparse else (lambda a: a)
    assert np.shares_memory(values(updated.kernel.given), values(given))
    data = stack([X[earlier_row[earlier_row >= 0]], added])
    everything = np.arange(data.shape[0])
    expected = pairwise_kernels(data.toarray() if sparse else data, metric="rbf", gamma=spec.gamma)
    some, new = everything[::7], everything[-added.shape[0]:]
    coef = np.random.default_rng(7).normal(size=(some.size, 2))
    np.testing.assert_allclose(updated.products(some, coef, new), expected[np.ix_(new, some)] @ coef, atol=1e-5)
    np.testing.assert_allclose(updated.products(new, coef[:new.size], some), expected[np.ix_(some, new)] @ coef[:new.size],
                               atol=1e-5)
    np.testing.assert_allclose(rows_block(updated, everything, everything), expected, atol=2e-6)
    assert updated.computed_rows - computed == 3
    assert columns(updated, everything).max() == updated.kernel.n_columns - 1 == 120 + 3 - 1

    room_left = updated.width - updated.kernel.n_columns
    more, _ = _points(features, sparse, n=room_left + 1, seed=6)
    assert updated.updated(np.r_[everything, [-1] * more.shape[0]], more) is None
    assert updated.updated(everything[: everything.size // 2], data[:0]) is None  # half the points unused
    assert updated.store is store


@pytest.mark.parametrize("threads", ["serial", "parallel"])
def test_direct_rbf_rows_land_in_the_rows_asked_for(threads, monkeypatch):
    from svmkit.kernels import gram as transforms

    if threads == "parallel":  # several chunks of rows, the last one partial
        monkeypatch.setattr(transforms, "SERIAL_ELEMENTS", 0)
    X = np.random.default_rng(0).normal(size=(150, 5))
    idx = np.arange(149, -1, -2, dtype=np.int64)
    out_rows = np.random.default_rng(1).permutation(idx.size).astype(np.int64)
    out = np.full((idx.size, X.shape[0]), np.nan)
    transforms.rbf_rows_direct(np.ascontiguousarray(X.T), idx, 0.3, out, out_rows)
    expected = pairwise_kernels(X[idx], X, metric="rbf", gamma=0.3)
    np.testing.assert_allclose(out[out_rows], expected, rtol=1e-13, atol=0)


def test_a_feature_index_near_2_31_sizes_no_array_by_it():
    """Sparse kernels count and scatter over the columns the data use: a feature index of
    2,000,000,000 (a LIBSVM file's) fits and predicts in kilobytes, as the same data with the
    feature renumbered does."""
    import tracemalloc

    rng = np.random.default_rng(0)
    narrow = sp.random(40, 6, density=0.5, format="csr", random_state=1)
    narrow[:, 5] = rng.normal(size=(40, 1))
    y = np.where(narrow[:, 0].toarray().ravel() > 0.2, 1, -1)
    wide = sp.csr_matrix((narrow.data, np.where(narrow.indices == 5, 2_000_000_000, narrow.indices), narrow.indptr),
                         shape=(40, 2_000_000_001))
    expected = svmkit.SVC(gamma=0.5).fit(narrow, y).decision_function(narrow)
    tracemalloc.start()
    got = svmkit.SVC(gamma=0.5).fit(wide, y).decision_function(wide)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2**20
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)


def test_sparse_columns_extended_by_rows_give_the_inner_products_of_all_rows():
    """An update's points extend the sparse columns already converted: inner products with
    the joined rows equal the dense products, and rows using a feature not seen ask for a
    conversion afresh (None)."""
    X = sp.random(60, 20, density=0.3, format="csr", random_state=4, dtype=np.float64)
    X.sort_indices()
    earlier, added = X[:50], X[50:]
    split = SparseColumns(earlier, dense_fraction=np.inf)
    assert np.all(np.diff(added.indptr) > 0) and set(added.indices) <= set(earlier.indices)
    joined, prepared = split.with_rows(split.prepare(earlier), added)
    out = np.empty((X.shape[0], X.shape[0]))
    joined.inner(prepared, out, np.arange(X.shape[0], dtype=np.int64))
    np.testing.assert_allclose(out, (X @ X.T).toarray(), atol=1e-14)
    wider = sp.hstack([added, sp.csr_matrix(np.ones((added.shape[0], 1)))], format="csr")
    narrower = SparseColumns(sp.hstack([earlier, sp.csr_matrix((50, 1))], format="csr"), np.inf)
    assert narrower.with_rows(narrower.prepare(earlier), wider) is None
