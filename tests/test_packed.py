"""The packed storage of the float32-preconditioned solver against LAPACK's own conversions and
dense products."""

import numpy as np
import pytest
import scipy.linalg.lapack as lapack

from svmkit._core import dense
from svmkit.solvers.dense.packed import _packed_products, _store_rows, rfp_layout


def _symmetric(n, seed=0):
    A = np.random.default_rng(seed).normal(size=(n, n))
    return A + A.T


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 50, 51])
def test_rows_are_stored_in_lapacks_packed_and_rfp_layouts(n):
    K = _symmetric(n)
    size = n * (n + 1) // 2
    packed, rfp = np.empty(size), np.empty(size, dtype=np.float32)
    for lo in range(0, n, 4):
        _store_rows(K[lo:lo + 4, lo:], lo, n, 0.5, packed, rfp)
    np.testing.assert_array_equal(packed, lapack.dtrttp(K, uplo="L")[0])
    np.testing.assert_array_equal(rfp, lapack.strttf((K + 0.5 * np.eye(n)).astype(np.float32), transr="N", uplo="L")[0])
    e, k, ld = rfp_layout(n)
    assert ld * k == size and e == (n % 2 == 0)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("n", [1, 5, 200])
def test_packed_products_equal_the_dense_product(n, threads):
    K = _symmetric(n, seed=1)
    P = np.random.default_rng(2).normal(size=(3, n))
    got = _packed_products(lapack.dtrttp(K, uplo="L")[0], n, P, threads)
    np.testing.assert_allclose(got, P @ K, rtol=1e-12, atol=1e-12 * np.abs(P @ K).max())


@pytest.mark.parametrize("n", [1, 2, 7, 300, 2501])
def test_rfp_cholesky_solve_equals_lapacks_spftrs(n):
    # 2,501: triangles of several BLOCK columns and updates of several CHUNK rows
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n)).astype(np.float32)
    H = A @ A.T + n * np.eye(n, dtype=np.float32)
    factor, info = lapack.spftrf(n, lapack.strttf(H, transr="N", uplo="L")[0], transr="N", uplo="L")
    assert info == 0
    B = rng.normal(size=(n, 3)).astype(np.float32)
    expected = lapack.spftrs(n, factor, B, transr="N", uplo="L")[0]
    X = np.ascontiguousarray(B.T)
    dense.rfp_cholesky_solve(factor, n, X)
    np.testing.assert_allclose(X.T, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


@pytest.mark.parametrize("n", [1, 2, 7, 300, 513, 1200])
def test_rfp_cholesky_equals_lapacks_spftrf(n):
    # 513 and 1,200: halves of several 256-column blocks, the last one partial, odd and even n
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n + 3)).astype(np.float32)
    rfp = lapack.strttf(A @ A.T / n + np.eye(n, dtype=np.float32), transr="N", uplo="L")[0]
    expected, info = lapack.spftrf(n, rfp.copy(), transr="N", uplo="L")
    assert info == 0
    assert dense.rfp_cholesky(rfp, n) == 0
    np.testing.assert_allclose(rfp, expected, rtol=0, atol=2e-6 * np.abs(expected).max())


@pytest.mark.parametrize("n, bad", [(6, 4), (7, 1), (600, 450)])
def test_rfp_cholesky_reports_the_first_minor_that_is_not_positive_definite(n, bad):
    H = np.eye(n, dtype=np.float32)
    H[bad, bad] = -1.0
    rfp = lapack.strttf(H, transr="N", uplo="L")[0]
    assert dense.rfp_cholesky(rfp.copy(), n) == lapack.spftrf(n, rfp.copy(), transr="N", uplo="L")[1] == bad + 1
