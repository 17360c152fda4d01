"""SciPy's LAPACK called through ctypes (without the GIL) against SciPy's own wrappers of the
same routines: the same Cholesky factor, triangular inverse and eigenpairs bit for bit, in
place, and the same refusals."""

import numpy as np
import pytest
import scipy.linalg as la

from svmkit.solvers.dense._lapack_nogil import lower_cholesky, lower_solve, lower_triangular_inverse, symmetric_eigen


def _positive_definite(n, seed=0):
    A = np.random.default_rng(seed).normal(size=(n, n))
    return A @ A.T + n * np.eye(n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 7, 300])
def test_cholesky_factor_is_scipys_in_the_arrays_own_memory(n, dtype):
    H = _positive_definite(n).astype(dtype)
    theirs = la.cho_factor(H.copy(order="F"), lower=True)[0]
    F = H.copy(order="F")
    assert lower_cholesky(F) is F
    np.testing.assert_array_equal(np.tril(F), np.tril(theirs))
    np.testing.assert_array_equal(np.triu(F, 1), np.triu(H, 1))  # the other triangle untouched


def test_cholesky_of_a_c_ordered_array_factors_a_fortran_copy():
    H = _positive_definite(20)
    L = lower_cholesky(H.copy())
    np.testing.assert_allclose(np.tril(L) @ np.tril(L).T, H, rtol=1e-12)


def test_cholesky_refuses_a_matrix_that_is_not_positive_definite_as_scipy_does():
    H = np.asfortranarray(np.diag([1.0, 2.0, -1.0]))
    with pytest.raises(la.LinAlgError, match="3-th leading minor"):
        la.cho_factor(H.copy(order="F"), lower=True)
    with pytest.raises(la.LinAlgError, match="3-th leading minor"):
        lower_cholesky(H)


@pytest.mark.parametrize("n", [1, 7, 300])
def test_triangular_inverse_is_scipys_in_place(n):
    L = np.asfortranarray(la.cholesky(_positive_definite(n), lower=True))
    theirs, info = la.lapack.dtrtri(L.copy(order="F"), lower=1)
    assert info == 0
    assert lower_triangular_inverse(L) == 0
    np.testing.assert_array_equal(np.tril(L), np.tril(theirs))


def test_triangular_inverse_reports_a_zero_pivot_and_refuses_a_c_ordered_array():
    L = np.asfortranarray(np.diag([1.0, 0.0, 2.0]))
    assert lower_triangular_inverse(L) == 2
    with pytest.raises(ValueError, match="Fortran-ordered"):
        lower_triangular_inverse(np.ascontiguousarray(np.eye(3)[:, ::-1]))


@pytest.mark.parametrize("n", [1, 7, 300])
def test_eigendecomposition_is_scipys_evd_in_the_arrays_own_memory(n):
    K = _positive_definite(n) - n * np.eye(n)  # some eigenvalues negative
    w_theirs, V_theirs = la.eigh(K, driver="evd")
    F = K.copy(order="F")
    w, V = symmetric_eigen(F)
    assert V is F
    np.testing.assert_array_equal(w, w_theirs)
    np.testing.assert_array_equal(V, V_theirs)


def test_an_empty_matrix_factorises_to_empty_results():
    assert lower_cholesky(np.zeros((0, 0))).shape == (0, 0)
    w, V = symmetric_eigen(np.zeros((0, 0)))
    assert w.shape == (0,) and V.shape == (0, 0)


def test_lower_solve_on_a_block_of_a_larger_array():
    """trsm through cython_blas on a leading block of a larger Fortran array (its leading
    dimension), from a row on, and transposed, against SciPy's solve on copies."""
    rng = np.random.default_rng(0)
    buf = np.asfortranarray(rng.normal(size=(40, 40)))
    L = buf[:30, :30]
    L[np.diag_indices(30)] = 3.0 + np.abs(L.diagonal())
    dense_L = np.tril(L)
    wide = np.asfortranarray(rng.normal(size=(35, 8)))
    B = wide[:30, 1:5]
    expected = B.copy()
    expected[7:] = la.solve_triangular(dense_L[7:, 7:], B[7:], lower=True)
    lower_solve(L, B, start=7)
    np.testing.assert_allclose(B, expected, rtol=1e-12)
    for columns in (1, 2):  # trsv, then trsm
        X = np.asfortranarray(rng.normal(size=(30, columns)))
        expected = la.solve_triangular(dense_L, X, lower=True, trans="T")
        lower_solve(L, X, trans=True)
        np.testing.assert_allclose(X, expected, rtol=1e-12)
        Y = wide[:30, 5:5 + columns]
        expected = Y.copy()
        expected[3:] = la.solve_triangular(dense_L[3:, 3:], Y[3:], lower=True)
        lower_solve(L, Y, start=3)
        np.testing.assert_allclose(Y, expected, rtol=1e-12)
