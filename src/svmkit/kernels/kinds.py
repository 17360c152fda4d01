"""Kernels: their specifications (`KernelSpec`: which function, with which parameters resolved
to numbers, and how 'scale' and 'auto' resolve γ from statistics of the data) and their kinds,
each a resolved `KernelSpec` that knows its own input and holds its mathematics
once: the kernels defined by inner products and distances (`DotKernel`), a precomputed matrix
and a callable, beside a small base of what they share (`KernelKind`). Each checks its input,
gives training rows, whole matrices, blocks and the diagonal, and the expansion's products at
prediction, on the arrays a backend hands it (`HostArrays` here, `kernels.device.DeviceArrays`
on a GPU), so that no model tests which kind it holds. A callable is called on the host's
arrays unless it is wrapped in `OnDevice`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from svmkit._arrays import SCRATCH, RawRows, densify, holds_numbers, raw_data
from svmkit._threads import compiled_thread_count, compiled_threads, one_blas_thread
from svmkit._validation import check_coef0, check_degree, check_gamma, check_kernel, check_precomputed, check_symmetric
from svmkit.exceptions import warn
from svmkit.kernels.gram import (LINEAR, POLY, RBF, SIGMOID, TRAIN_OVERLAP, CentreKernel, SparseColumns, TrainingKernel,
                                 as_kernel_input, call_kernel, dense_products, kernel_block, kernel_diag, row_sq_norms)
from svmkit.parallel.tasks import run_tasks


#: The compiled transform that turns inner products into each kernel's values.
_TRANSFORMS = {"linear": LINEAR, "poly": POLY, "rbf": RBF, "sigmoid": SIGMOID}


@dataclass(frozen=True)
class KernelSpec:
    """A kernel with its parameters resolved to numbers.

    linear  <x, z>
    poly    (gamma <x, z> + coef0) ** degree
    rbf     exp(-gamma ||x - z||^2)
    sigmoid tanh(gamma <x, z> + coef0)
    precomputed: X already holds kernel values K(x_i, x_j).
    callable: func(X, Z) returns the Gram matrix (`OnDevice(func)`: on a device, of its arrays).
    """

    name: str
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0
    func: Callable | None = None

    @property
    def is_precomputed(self) -> bool:
        return self.name == "precomputed"

    @property
    def is_callable(self) -> bool:
        return self.func is not None

    @property
    def on_device(self) -> bool:
        """Whether a callable kernel is handed the device's arrays under device='cuda' (`OnDevice`)."""
        return isinstance(self.func, OnDevice)

    @property
    def transform(self) -> int:
        """Code of the compiled transform from inner products to kernel values (`transforms`)."""
        return _TRANSFORMS[self.name]

    @property
    def uses_norms(self) -> bool:
        """Whether kernel values need the squared norms: ||a − b||² = ||a||² + ||b||² − 2<a, b>."""
        return self.name == "rbf"

    def values_set_by(self) -> str:
        """What sets this kernel's values, to name in an error: its parameters, or the input."""
        if self.is_callable:
            return f"the values the kernel callable {getattr(self.func, '__qualname__', repr(self.func))} returns"
        return {"linear": "the data, whose inner products the linear kernel's values are",
                "poly": f"gamma={self.gamma!r}, coef0={self.coef0!r}, degree={self.degree}",
                "rbf": f"gamma={self.gamma!r}", "sigmoid": f"gamma={self.gamma!r}, coef0={self.coef0!r}",
                "precomputed": "the precomputed kernel matrix"}[self.name]

    def of_self(self, sq_norms: np.ndarray) -> np.ndarray:
        """K(x, x) from ||x||², for the kernels defined by inner products and distances."""
        if self.name == "rbf":
            return np.ones_like(sq_norms)
        if self.name == "linear":
            return sq_norms
        if self.name == "poly":
            return (self.gamma * sq_norms + self.coef0) ** self.degree
        return np.tanh(self.gamma * sq_norms + self.coef0)


def feature_variance(X) -> float:
    """The variance of every value of X: dense, CSR, or a lazy array (Dask) that computes it where
    its blocks live."""
    if sp.issparse(X):
        mean = X.mean()
        return float(X.multiply(X).mean() - mean * mean)
    var = X.var()
    return float(var.compute() if hasattr(var, "compute") else var)


def _values_differ(X) -> bool:
    """Whether X holds two different values (dense, CSR or lazy)."""
    low, high = X.min(), X.max()
    low, high = (v.compute() if hasattr(v, "compute") else v for v in (low, high))
    return bool(high != low)


def resolve_gamma(gamma, X) -> float:
    """Resolve scikit-learn's gamma: 'scale' = 1 / (n_features Var(X)), 'auto' = 1 / n_features."""
    n_features = X.shape[1]
    check_gamma(gamma)
    if isinstance(gamma, str):
        if gamma == "scale":
            var = feature_variance(X)
            scale = 1.0 / (n_features * var) if var != 0 else 1.0
            if np.isfinite(scale) and (var != 0 or not _values_differ(X)):
                return scale
            warn(f"gamma='scale': the variance of X ({var:g}) is too small for 1 / (n_features · Var X) "
                 "in float64, although its values differ; gamma=1.0 is used, on which the kernel is "
                 "nearly constant. Scale the data (e.g. with StandardScaler) or give gamma",
                 RuntimeWarning)
            return 1.0
        return 1.0 / n_features
    return float(gamma)


#: Elements of one K(X_block, centres) block at prediction time, and fewest rows of a block
#: (a GEMM of fewer rows runs below BLAS's speed).
PREDICT_BLOCK = 2**19
MIN_BLOCK_ROWS = 32
#: Kernel values of a prediction from which its blocks run on several threads.
PARALLEL_PREDICT = 4 * PREDICT_BLOCK
_NO_NORMS = np.zeros(0)
#: How the fit's overflow checks begin: scikit-learn's wording for the same failure, which it
#: reports after solving, where these checks name its cause in the data before any solve.
NOT_FINITE = "The dual coefficients or intercepts are not finite"


def check_kernel_range(X) -> None:
    """Raise a ValueError naming the first row of X whose squared norm overflows float64:
    every kernel of it would be inf or NaN."""
    with np.errstate(over="ignore"):
        bad = np.flatnonzero(~np.isfinite(row_sq_norms(X)))
    if bad.size:
        raise ValueError(f"{NOT_FINITE}: X row {bad[0]} has values too large for the kernel (its squared "
                         "norm overflows float64); scale the data (e.g. with MinMaxScaler)")


def check_poly_range(kernel, X) -> None:
    """Raise a ValueError naming gamma, coef0 and degree when the poly kernel's bound over X,
    (gamma·max||x||² + |coef0|)^degree (Cauchy–Schwarz), overflows float64: its values would be
    inf or NaN, and the fit silently wrong."""
    with np.errstate(over="ignore"):
        bound = np.float64(kernel.gamma * np.max(row_sq_norms(X), initial=0.0) + abs(kernel.coef0)) ** kernel.degree
    if not np.isfinite(bound):
        raise ValueError(f"{NOT_FINITE}: the poly kernel's values overflow float64 on X "
                         f"(gamma={kernel.gamma!r}, coef0={kernel.coef0!r}, degree={kernel.degree}); lower them or "
                         "scale the data")


class HostArrays:
    """Where the host computes a kernel: NumPy arrays, the kernel blocks by the compiled core's
    float64 tiles (`kernels.gram`), sparse data kept sparse. The device's counterpart is
    `kernels.device.DeviceArrays`; a backend holds one of them and hands it to the kinds."""

    xp = np

    @staticmethod
    def training_rows(spec, Xk):
        """The rows K(x_i, ·) over the training data, computed on demand (`TrainingKernel`)."""
        return TrainingKernel(spec, Xk)

    @staticmethod
    def place(spec, Xk):
        """(X as the blocks read it, its squared row norms where the kernel needs them, else None)."""
        return Xk, row_sq_norms(Xk) if spec.uses_norms else None

    @staticmethod
    def buffer(size):
        """A float64 buffer of `size` values that blocks not kept share."""
        return np.empty(size)

    @staticmethod
    def gram(spec, A, B, a_sq, b_sq, out=None):
        """K(A, B) in float64 (`kernel_block`, into `out` when given; it takes A's norms itself)."""
        return kernel_block(spec, A, B, b_sq, out=out)

    @staticmethod
    def given_products(K, W):
        """K @ W (float64) for given kernel values K (a precomputed test kernel's columns)."""
        out = np.empty((K.shape[0], W.shape[1]))
        apply_weights(K, W, out)
        return out

    @staticmethod
    def called_input(spec, X):
        """X as a callable kernel is handed it: as given."""
        return X

    @staticmethod
    def call(spec, A, B, dtype=np.float64):
        """K(A, B) = func(A, B) in float64, checked (`call_kernel`)."""
        return call_kernel(spec, A, B)

    @staticmethod
    def called_rows(spec, Xk):
        """The rows K(x_i, ·) of a callable kernel, computed on demand (`TrainingKernel`)."""
        return TrainingKernel(spec, Xk)

    @staticmethod
    def products(centres, X, W, dtype):
        """K(X, centres) @ W (float64; `dtype` is the device's) by blocks of test rows, each a
        serial task (its GEMM on one BLAS thread, its transform on one compiled thread) taken by
        the next free thread: on a machine busy elsewhere, no thread waits for a descheduled one
        at the end of every block's parallel loop, and no idle BLAS worker spins on the core the
        others need."""
        kernel, sv = centres.kernel, centres.sv
        n, n_sv = X.shape[0], sv.shape[0]
        if not (sp.issparse(X) or sp.issparse(sv) or kernel.is_callable or callable(W)):
            # dense rows and a formed W: the core's tiles, on one thread below PARALLEL_PREDICT kernel values
            x_sq = row_sq_norms(X) if kernel.uses_norms else _NO_NORMS
            c_sq = centres.rows.sq if kernel.uses_norms else _NO_NORMS
            with one_blas_thread(), compiled_threads(1 if n * n_sv < PARALLEL_PREDICT else None):
                return dense_products(X, x_sq, sv, c_sq, kernel, W)
        out = np.empty((n, W.shape[1]))
        step = max(MIN_BLOCK_ROWS, PREDICT_BLOCK // max(n_sv, 1))
        x = centres.rows.rows_of(X)

        def block(lo):
            hi = min(n, lo + step)
            buf = SCRATCH.take((hi - lo) * n_sv, np.float64)
            apply_weights(centres.rows.block(X, x, lo, hi, buf), W, out[lo:hi])
            SCRATCH.give(buf)

        starts = [(lo,) for lo in range(0, n, step)]
        # a callable kernel runs Python code, which threads would only take turns at; a small
        # prediction runs here, its loops on one thread as every block's are (threads cost more
        # than they gain below PARALLEL_PREDICT kernel values, and lose beside a busy core)
        threads = 1 if kernel.is_callable or n * n_sv < PARALLEL_PREDICT else compiled_thread_count()
        with one_blas_thread(), compiled_threads(1):
            run_tasks(block, starts, n_jobs=threads, limit_threads=True)
        return out


#: The host's arrays, which every kind computes on unless a backend gives it the device's.
HOST = HostArrays()


class KernelKind(KernelSpec):
    """What the kinds share: the defaults of a kernel whose input is rows of data (checks that
    pass, rows taken as rows, every solver), its blocks and diagonal from those rows
    (`kernels.gram`, which computes each kind's), and its training rows on the `arrays` a
    backend gives."""

    def check_input(self, X, n_train=None) -> None:
        """Raise on X this kind cannot take (`n_train`: the training rows, at prediction)."""

    @staticmethod
    def take(X, rows, train):
        """The inputs of `rows` of X for a fit on the rows `train` (the rows themselves)."""
        return X[rows]

    def auto_solver(self, n: int, exact_max: int) -> str:
        """'auto''s solver of the closed-form models: exact up to `exact_max` rows, else Nyström."""
        return "cholesky" if n <= exact_max else "nystrom"

    @staticmethod
    def check_solver(solver) -> None:
        """Raise when this kind cannot serve `solver` (every kind but a precomputed matrix can)."""

    @staticmethod
    def check_updatable(asking: str = "") -> None:
        """Raise when a model of this kind cannot keep its rows for exact updates (`partial_fit`,
        `forget`; every kind but a precomputed matrix can); `asking` names what needs them."""

    def given_matrix(self, Xk):
        """The whole training kernel when X is it (a precomputed matrix), else None."""
        return None

    def sq_norms(self, X):
        """||x||² per row where the kernel needs them (RBF), else None."""
        return row_sq_norms(X) if self.uses_norms else None

    def block(self, A, B, b_sq=None, out=None) -> np.ndarray:
        """K(A, B), float64 (`kernels.gram.kernel_block`)."""
        return kernel_block(self, A, B, b_sq, out=out)

    def diag(self, X) -> np.ndarray:
        """K(x_i, x_i) for every row of X, float64."""
        return kernel_diag(self, X)

    def training_rows(self, Xk, arrays=HOST):
        """The rows K(x_i, ·) over the training data, computed on demand on `arrays`."""
        return arrays.training_rows(self, Xk)


class DotKernel(KernelKind):
    """A kernel defined by inner products and distances (linear, poly, rbf, sigmoid): its blocks
    are one GEMM and a transform, which the host's and the device's arrays both compute."""

    def training_input(self, X):
        """The training data in the layout the kernel reads (dense float64, or CSR when sparse
        pays), checked for values whose kernel overflows (the data's norms, poly's power)."""
        Xk = as_kernel_input(X, TRAIN_OVERLAP)
        check_kernel_range(Xk)
        if self.name == "poly":  # the one kernel of this kind whose values grow past its inputs'
            check_poly_range(self, Xk)
        return Xk

    def support_vectors(self, X, support):
        """What prediction keeps of the training rows `support` (the rows themselves)."""
        return X[support]

    def matrix(self, Xk, arrays=HOST):
        """K(X, X) in float64, a fresh array of `arrays`."""
        D, sq = arrays.place(self, Xk)
        return arrays.gram(self, D, D, sq, sq)

    def lower_rows(self, Xk):
        """rows(lo, hi) → K[lo:hi, lo:] in float64, in one reused buffer: the training kernel by
        blocks of rows, from each block's diagonal on (the host's packed Cholesky)."""
        n = Xk.shape[0]
        sq = self.sq_norms(Xk)
        # sparse data's column split is made once: its rows are computed whole, then cut
        split = SparseColumns(Xk) if sp.issparse(Xk) else None
        buf = None

        def rows(lo, hi):
            nonlocal buf
            if buf is None:
                buf = np.empty((hi - lo) * n)
            if split is not None:
                return kernel_block(self, Xk[lo:hi], Xk, sq, out=buf, b_split=split)[:, lo:]
            return kernel_block(self, Xk[lo:hi], Xk[lo:], None if sq is None else sq[lo:], out=buf)

        return rows

    def centre_rows(self, Xk, centres, block_elements, arrays=HOST):
        """rows(idx, keep) → K(X[idx], X[centres]) in float64 on `arrays` (Nyström's K_NM by blocks
        of at most `block_elements` values); blocks not kept share one buffer where `arrays` has
        one, so that no pass faults in fresh pages."""
        D, sq = arrays.place(self, Xk)
        at = arrays.xp.asarray(centres)
        C, c_sq = D[at], None if sq is None else sq[at]
        buf = arrays.buffer(min(Xk.shape[0], max(1, block_elements // C.shape[0])) * C.shape[0])

        def rows(idx, keep=False):
            return arrays.gram(self, D[idx], C, None if sq is None else sq[idx], c_sq, out=None if keep else buf)

        return rows

    def centres(self, support_vectors, support) -> "Centres":
        """The expansion's centres ready for K(X, centres) @ W at prediction."""
        return DataCentres(self, support_vectors)


def apply_weights(K, W, out):
    """out = K @ W for a kernel block K: W an n_centres × k matrix, or a callable W(K, out)
    that writes the product without the matrix being formed (one-vs-one's `PairWeights`)."""
    if callable(W):
        W(K, out)
    else:
        np.matmul(K, W, out=out)


class Centres:
    """The centres of a fitted expansion; `products(X, W, arrays, dtype)` = K(X, centres) @ W
    (W: n_centres × k, a matrix or, on the host, what `apply_weights` takes), the kernel blocks
    on `arrays` in `dtype` where `runs_on_device`, else on the host."""

    runs_on_device = False

    def products(self, X, W, arrays=HOST, dtype=np.float64) -> np.ndarray:
        raise NotImplementedError


class RowCentres(Centres):
    """Centres that are rows of the training input: K(X, centres) by blocks of test rows
    (`CentreKernel`). What the kinds' centres share: their state, and their products on the
    arrays given."""

    def __init__(self, kernel, support_vectors):
        self.kernel = kernel
        self.sv = self._centres(support_vectors)
        self.rows = CentreKernel(kernel, self.sv)

    def __getstate__(self):
        # what the centres derive is made again on load, not stored twice in a model file
        return {"kernel": self.kernel, "sv": self.sv}

    def __setstate__(self, state):
        self.__init__(state["kernel"], state["sv"])

    def products(self, X, W, arrays=HOST, dtype=np.float64):
        # one conversion up front (densified unless sparse pays), not one per block
        return arrays.products(self, self._input(X), W, dtype)


class DataCentres(RowCentres):
    """Centres of a kernel of inner products and distances: data rows, as the kernel reads them."""

    runs_on_device = True

    @staticmethod
    def _centres(support_vectors):
        return as_kernel_input(support_vectors)

    @staticmethod
    def _input(X):
        return as_kernel_input(X)


class PrecomputedKernel(KernelKind):
    """X holds the kernel values K(x_i, x_j) themselves: square at fit, one column per training
    row at prediction. Nothing is computed: on a device the matrix is copied there (the
    solver's rows by the backend, in float32; the closed-form models' K in float64)."""

    def check_input(self, X, n_train=None) -> None:
        check_precomputed(X, n_train)

    def training_input(self, X):
        return as_kernel_input(X, TRAIN_OVERLAP)

    def support_vectors(self, X, support):
        return np.empty((0, 0))

    @staticmethod
    def take(X, rows, train):
        return X[np.ix_(rows, train)]

    def auto_solver(self, n, exact_max):
        return "cholesky"  # the N × N matrix is given: nothing is saved by approximating it

    @staticmethod
    def check_solver(solver):
        if solver == "nystrom":
            raise ValueError("solver='nystrom' computes kernel blocks from X; it cannot take kernel='precomputed'")

    @staticmethod
    def check_updatable(asking="partial_fit, forget and keep_data=True need"):
        # a row of a precomputed kernel holds a column per training row, which an update changes
        raise ValueError(f"{asking} the data, not a precomputed kernel (kernel='precomputed'): its rows would lack "
                         "the columns of the rows added or forgotten")

    def given_matrix(self, Xk):
        return densify(Xk)

    def matrix(self, Xk, arrays=HOST):
        """K = X, a fresh float64 array of `arrays`."""
        return arrays.xp.array(densify(Xk), dtype=np.float64)

    def lower_rows(self, Xk):
        n = Xk.shape[0]
        buf = np.empty(0)

        def rows(lo, hi):
            nonlocal buf
            if buf.size < (hi - lo) * n:
                buf = np.empty((hi - lo) * n)
            K = buf[:(hi - lo) * (n - lo)].reshape(hi - lo, n - lo)
            K[...] = densify(Xk[lo:hi, lo:])
            return K

        return rows

    def centres(self, support_vectors, support):
        return ColumnCentres(support)


class ColumnCentres(Centres):
    """The centres of a precomputed kernel: columns `support` of the test kernel, whose products
    are formed on `arrays` in float64 (the values are given: `dtype` does not round them)."""

    runs_on_device = True

    def __init__(self, support):
        self.support = support

    def products(self, X, W, arrays=HOST, dtype=np.float64):
        return arrays.given_products(densify(X)[:, self.support], W)


#: Training rows on which a callable kernel's symmetry is checked at fit: one call of the
#: kernel on at most this many rows, whatever the size of X.
SYMMETRY_SAMPLE = 256


class CallableKernel(KernelKind):
    """func(A, B) gives the Gram matrix K(A, B); data that is not numbers in an array (RawRows)
    reaches it as the user gave it. Under a device's arrays it is called on the host and its
    values copied to the device by blocks of rows, or, wrapped in `OnDevice`, called with the
    device's arrays (`DeviceArrays.call`); prediction calls it on the host."""

    def check_input(self, X, n_train=None) -> None:
        """At fit, K(S, S) on up to SYMMETRY_SAMPLE rows S spread over X must be symmetric, as a
        precomputed kernel must: on a kernel that is not, SMO may cycle to its cap."""
        if n_train is not None:
            return
        rows = np.unique(np.linspace(0, X.shape[0] - 1, min(X.shape[0], SYMMETRY_SAMPLE)).astype(np.int64))
        name = getattr(self.func, "__qualname__", repr(self.func))
        check_symmetric(call_kernel(self, X[rows], X[rows]), f"kernel callable {name}", "K(X, X)", rows)

    def training_input(self, X):
        return X if isinstance(X, RawRows) else as_kernel_input(X, TRAIN_OVERLAP)

    def support_vectors(self, X, support):
        return raw_data(X[support])

    def training_rows(self, Xk, arrays=HOST):
        return arrays.called_rows(self, Xk)

    def matrix(self, Xk, arrays=HOST):
        """K(X, X) = func(X, X) in float64, checked (`call_kernel`), a fresh array of `arrays`."""
        D = arrays.called_input(self, Xk)
        return arrays.call(self, D, D)

    def lower_rows(self, Xk):
        def rows(lo, hi):
            return call_kernel(self, Xk[lo:hi], Xk[lo:])

        return rows

    def centre_rows(self, Xk, centres, block_elements, arrays=HOST):
        D = arrays.called_input(self, Xk)
        C = D[centres if D is Xk else arrays.xp.asarray(centres)]

        def rows(idx, keep=False):
            return arrays.call(self, D[idx], C)

        return rows

    def centres(self, support_vectors, support):
        return CallableCentres(self, support_vectors)


class CallableCentres(RowCentres):
    """Centres of a callable kernel: the centres and the test rows are handed to it as given."""

    @staticmethod
    def _centres(support_vectors):
        return as_kernel_input(support_vectors) if holds_numbers(support_vectors) else RawRows(support_vectors)

    @staticmethod
    def _input(X):
        return X


@dataclass(frozen=True)
class OnDevice:
    """A callable kernel func(A, B) that computes on the arrays it is handed, NumPy's or CuPy's
    (written against the array API the two share), wrapped to say so: under device='cuda' the
    training data is placed on the device once (dense float64) and func is handed CuPy arrays
    there, its values staying on the device; elsewhere, and at prediction, NumPy arrays. A
    callable not wrapped is always handed the data on the host, whatever the device: whether
    a callable computes correctly on CuPy arrays is not something svmkit can find out by
    trying it, so it is never assumed."""

    func: Callable

    def __post_init__(self):
        if not callable(self.func):
            raise TypeError(f"OnDevice wraps a kernel function func(A, B), got {self.func!r}")

    def __call__(self, A, B):
        return self.func(A, B)


def kernel_kind(kernel) -> type[KernelKind]:
    """The kind of the `kernel` parameter: a callable, a precomputed matrix, or a kernel of inner
    products and distances."""
    if callable(check_kernel(kernel)):
        return CallableKernel
    return PrecomputedKernel if kernel == "precomputed" else DotKernel


def make_kernel(kernel, X, gamma="scale", degree=3, coef0=0.0) -> KernelKind:
    """Validate the kernel parameters and resolve them against the training data X."""
    kind = kernel_kind(kernel)
    if kind is CallableKernel:
        return CallableKernel("callable", func=kernel)
    return kind(kernel, gamma=resolve_gamma(gamma, X), degree=check_degree(degree), coef0=check_coef0(coef0))
