"""SciPy's LAPACK Cholesky factorisation (potrf), triangular inverse (trtri) and symmetric
eigendecomposition (syevd), a block reflector (tpmqrt) and BLAS's triangular solve (trsm),
on blocks of larger arrays too, called through ctypes, which releases the GIL for the call: SciPy's
own wrappers (`scipy.linalg.cho_factor`, `scipy.linalg.lapack.dtrtri`, `scipy.linalg.eigh`)
hold it, so that factorisations on threads side by side ran one at a time. The functions are
those of `scipy.linalg.cython_lapack` and `scipy.linalg.cython_blas`, the library the
wrappers call; each works in place on a Fortran-ordered array, or on a block of one (by its
leading dimension: SciPy's wrappers would copy the block first)."""

from __future__ import annotations

import ctypes
import functools

import numpy as np
import scipy.linalg as la
import scipy.linalg.cython_blas as cython_blas
import scipy.linalg.cython_lapack as cython_lapack

_CHAR = ctypes.c_char_p
_INT = ctypes.POINTER(ctypes.c_int)
_REAL = {np.dtype(np.float32): ctypes.POINTER(ctypes.c_float), np.dtype(np.float64): ctypes.POINTER(ctypes.c_double)}
_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}
#: Each routine's character arguments, then the others: r a real array, i an integer (or array).
_ARGUMENTS = {"potrf": ("c", "irii"), "potri": ("c", "irii"), "trtri": ("cc", "irii"), "syevd": ("cc", "irirriiii"),
              "trsm": ("cccc", "iirriri"), "trsv": ("ccc", "iriri"), "tpmqrt": ("cc", "iiiiiririririri")}

# The C API's capsule functions, with prototypes of their own (those of ctypes.pythonapi are
# shared by the whole process); they hold the GIL and raise the error they set.
_capsule_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def _address(name: str) -> int:
    """The address of scipy.linalg.cython_lapack's (or cython_blas's) `name`, from the capsule
    it exports it in."""
    exports = cython_lapack.__pyx_capi__
    capsule = exports[name] if name in exports else cython_blas.__pyx_capi__[name]
    return _capsule_pointer(capsule, _capsule_name(capsule))


@functools.cache
def _routine(name: str, dtype: np.dtype):
    """LAPACK's (or BLAS's) `name` for `dtype` from SciPy, as a ctypes function."""
    chars, others = _ARGUMENTS[name]
    types = [_CHAR] * len(chars) + [_REAL[dtype] if kind == "r" else _INT for kind in others]
    return ctypes.CFUNCTYPE(None, *types)(_address(_PREFIX[dtype] + name))


def _call(name: str, chars: tuple, *args) -> int:
    """LAPACK's `name` with `chars`, then `args` but the last, info (arrays, whose type is the
    first's or C int, and ints, as `_ARGUMENTS` orders them); returns its info, which is never
    negative (an argument LAPACK refuses raises)."""
    dtype = next(a.dtype for a in args if isinstance(a, np.ndarray))
    info = ctypes.c_int(0)
    refs = [a.ctypes.data_as(_REAL[dtype] if a.dtype == dtype else _INT) if isinstance(a, np.ndarray)
            else ctypes.byref(ctypes.c_int(a)) for a in args]
    _routine(name, dtype)(*chars, *refs, ctypes.byref(info))
    if info.value < 0:
        raise ValueError(f"LAPACK {name} refused its argument {-info.value}")
    return info.value


def lower_cholesky(A: np.ndarray) -> np.ndarray:
    """L with A = LLᵀ in A's lower triangle (potrf), A float32 or float64 and Fortran-ordered or
    a leading block of a Fortran-ordered array (else a Fortran-ordered copy of it is
    factorised); its upper triangle is left as it was. Raises la.LinAlgError as
    `scipy.linalg.cho_factor` does when A is not positive definite."""
    if A.strides[0] != A.itemsize or A.strides[1] < A.itemsize * A.shape[0]:
        A = np.asfortranarray(A)
    info = _call("potrf", (b"L",), A.shape[0], A, _leading(A))
    if info > 0:
        raise la.LinAlgError(f"{info}-th leading minor of the array is not positive definite")
    return A


def lower_triangular_inverse(L: np.ndarray) -> int:
    """L⁻¹ in place of the lower triangular, Fortran-ordered L (trtri); returns LAPACK's info
    (k > 0: L[k-1, k-1] is zero and L holds no inverse)."""
    if not L.flags.f_contiguous:
        raise ValueError("the triangular inverse works in place on a Fortran-ordered array")
    return _call("trtri", (b"L", b"N"), L.shape[0], L, max(1, L.shape[0]))


def lower_cholesky_inverse(L: np.ndarray) -> int:
    """A⁻¹ in the lower triangle of the Fortran-ordered L that holds A's lower Cholesky factor
    (potri, in place: 2N³/3 flops, a third of solving with the identity); returns LAPACK's info
    (k > 0: L[k-1, k-1] is zero and L holds no inverse)."""
    if not L.flags.f_contiguous:
        raise ValueError("the Cholesky inverse works in place on a Fortran-ordered array")
    return _call("potri", (b"L",), L.shape[0], L, max(1, L.shape[0]))


#: Right-hand sides up to which a triangular solve runs column by column (trsv, which streams the
#: triangle at memory speed): one column took a third of trsm's time at N = 10,000, two to four
#: about as long.
VECTOR_SOLVE_COLUMNS = 1


def lower_solve(L: np.ndarray, B: np.ndarray, start: int = 0, trans: bool = False) -> None:
    """B[start:] ← L[start:, start:]⁻¹B[start:] in place (trsm, or trsv for up to
    VECTOR_SOLVE_COLUMNS columns; with `trans`, B ← L⁻ᵀB, start 0), for the lower triangular
    float64 L and a float64 B, each Fortran-ordered or a block of one (a unit row stride)."""
    p, m = L.shape[0] - start, B.shape[1]
    if trans and start:
        raise ValueError("a transposed solve starts at the first row")
    if p <= 0 or m == 0:
        return
    if L.dtype != np.float64 or B.dtype != np.float64 or L.strides[0] != 8 or B.strides[0] != 8:
        raise ValueError("the triangular solve takes float64 arrays with a unit row stride")
    lda, ldb = _leading(L), _leading(B)
    real, byref, c_int = _REAL[np.dtype(np.float64)], ctypes.byref, ctypes.c_int
    a = ctypes.cast(L.ctypes.data + 8 * start * (1 + lda), real)
    transa = b"T" if trans else b"N"
    if m <= VECTOR_SOLVE_COLUMNS:
        for j in range(m):
            x = ctypes.cast(B.ctypes.data + 8 * (start + j * ldb), real)
            _routine("trsv", np.dtype(np.float64))(b"L", transa, b"N", byref(c_int(p)), a, byref(c_int(lda)), x,
                                                   byref(c_int(1)))
        return
    b = ctypes.cast(B.ctypes.data + 8 * start, real)
    _routine("trsm", np.dtype(np.float64))(b"L", b"L", transa, b"N", byref(c_int(p)), byref(c_int(m)),
                                           byref(ctypes.c_double(1.0)), a, byref(c_int(lda)), b, byref(c_int(ldb)))


def apply_block_reflector(V: np.ndarray, T: np.ndarray, A: np.ndarray, B: np.ndarray) -> None:
    """[A B] ← [A B]·Q in place (tpmqrt, SIDE='R'), Q the orthogonal factor of LAPACK's tpqrt of
    a triangle over a rectangle (L = 0), given by its Householder vectors V (N × K) and block
    reflector T (NB × K); A (M × K) and B (M × N) float64, each Fortran-ordered or a block of
    one."""
    if A.shape[0] == 0:
        return
    if A.strides[0] != 8 or B.strides[0] != 8:
        raise ValueError("the block reflector takes float64 arrays with a unit row stride")
    V, T = np.asfortranarray(V, dtype=np.float64), np.asfortranarray(T, dtype=np.float64)
    m, k, n, nb = A.shape[0], A.shape[1], B.shape[1], T.shape[0]
    work = np.empty(m * nb)
    _call("tpmqrt", (b"R", b"N"), m, n, k, 0, nb, V, _leading(V), T, _leading(T), A, _leading(A), B, _leading(B),
          work)


def _leading(A: np.ndarray) -> int:
    """LAPACK's leading dimension of A, Fortran-ordered or a block of a Fortran-ordered array."""
    return max(1, A.shape[0], A.strides[1] // A.itemsize if A.shape[1] > 1 else 1)


def symmetric_eigen(A: np.ndarray):
    """(w, V): the eigenvalues of the symmetric float64 A in ascending order and its
    eigenvectors as V's columns (syevd, from A's lower triangle), V in A's memory when A is
    Fortran-ordered. Raises la.LinAlgError when an eigenvalue does not converge."""
    A = np.asfortranarray(A, dtype=np.float64)
    n = A.shape[0]
    w = np.empty(n)
    work, iwork = np.empty(1), np.empty(1, dtype=np.intc)
    _call("syevd", (b"V", b"L"), n, A, max(1, n), w, work, -1, iwork, -1)  # the workspace's size
    work, iwork = np.empty(max(1, int(work[0]))), np.empty(max(1, int(iwork[0])), dtype=np.intc)
    info = _call("syevd", (b"V", b"L"), n, A, max(1, n), w, work, work.size, iwork, iwork.size)
    if info > 0:
        raise la.LinAlgError(f"the eigenvalue algorithm failed to converge ({info} off-diagonal elements)")
    return w, A
