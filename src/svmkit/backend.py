"""Layer 2, beside the solvers: where a fit runs, chosen once per fit and handed down — the host
(NumPy, SciPy, the compiled core) or an NVIDIA GPU through CuPy (`device='cuda'`). A backend offers the
array module and transfers,
the training kernel's rows and whole matrices, the expansion's products at prediction, the
factorisations of K + sI (Cholesky, eigen, packed), and the table of solvers it runs; a solver
it does not run is refused with an error naming the solver and the device. Models ask it
instead of testing the device. It picks its arrays once (`kernels.kinds.HostArrays` or
`kernels.device.DeviceArrays`) and hands them to the kernel kinds, which hold the mathematics;
centres whose `runs_on_device` is False (a callable's) have their products on the host.
Imports the solvers, kernels and shared helpers."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

import numpy as np

from svmkit._arrays import to_host
from svmkit.kernels.device import CACHE_SHARE, DeviceArrays, DeviceMatrix, device_memory_free, fits_on_device
from svmkit.kernels.kinds import HOST
from svmkit.parallel.tasks import run_tasks
from svmkit.solvers.dense.factorisations import CholeskyShift, EigenShift, MixedCholeskyShift, shifted_scores
from svmkit.solvers.dense.packed import PACKED_MAX_N, PACKED_MIN_N, PackedMixedCholesky
from svmkit.solvers.smo.cascade import OnHost
from svmkit.solvers.smo.row_source import MIN_ROWS, RowSource, row_source
from svmkit.solvers.smo.solver import UnboundedDualError
from svmkit.solvers.smo.starts import solve_posed

#: Rows up to which the host runs independent factorisations side by side, one per core on one
#: BLAS thread each, rather than in turn on every BLAS thread (`HostBackend.factors_side_by_side`).
SIDE_BY_SIDE_ROWS = 2_000
#: How to install what `device='cuda'` needs.
GPU_EXTRA = ("pip install 'svmkit[gpu]' (CuPy for CUDA 12: the cupy-cuda12x wheel) or 'svmkit[gpu-cuda13]' "
             "(cupy-cuda13x)")


class DeviceUnavailableError(RuntimeError):
    """`device='cuda'` was asked for where CuPy or a CUDA device is missing."""


def cupy_module():
    """CuPy, or a DeviceUnavailableError that says what is missing."""
    try:
        import cupy
    except ImportError as err:
        raise DeviceUnavailableError(f"device='cuda' needs CuPy, which is not installed: {GPU_EXTRA}") from err
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # CUDARuntimeError when the driver is missing, not only an empty count
        raise DeviceUnavailableError(f"device='cuda' found no usable CUDA driver ({err}); use device='cpu'") from err
    if count == 0:
        raise DeviceUnavailableError("device='cuda' found no CUDA device; use device='cpu'")
    return cupy


def cuda_available() -> bool:
    """Whether device='cuda' can run here."""
    try:
        cupy_module()
    except DeviceUnavailableError:
        return False
    return True


class HostBackend:
    """The CPU: NumPy arrays, kernel rows by BLAS and compiled loops, LAPACK factorisations."""

    device = "cpu"
    #: The solvers it runs: the closed-form models' exact ones, Nyström by normal equations
    #: ('nystrom') or conjugate gradient ('nystrom-cg'), data on a Dask cluster ('dask'),
    #: kernel logistic regression's Newton on the whole kernel ('newton') or on Nyström features,
    #: and many small SMO duals in one call into the core ('smo-batch').
    solvers = frozenset({"cholesky", "eigen", "nystrom", "nystrom-cg", "dask", "newton", "newton-nystrom",
                         "smo-batch"})

    def __init__(self):
        self.arrays = HOST
        self.xp = self.arrays.xp

    def require(self, solver: str, what: str, instead: str = "") -> None:
        """Raise a ValueError naming `what` (the solver as the user asked for it) and the
        device, and saying what runs here instead, when `solver` is not in `solvers`."""
        if solver not in self.solvers:
            raise ValueError(f"{what} runs on device='cpu'" + (f"; device={self.device!r} {instead}" if instead else ""))

    def to_host(self, a):
        return to_host(a)

    def auto_solver(self, kernel, n: int, exact_max: int) -> str:
        """The closed-form models' 'auto': the kernel kind decides (exact up to `exact_max` rows)."""
        return kernel.auto_solver(n, exact_max)

    def training_rows(self, kernel, Xk, cache_size: float, min_rows: int = MIN_ROWS,
                      per_problem: bool = False, room: int = 0) -> RowSource:
        """The training kernel's rows for the solver: a given matrix whole, else computed into a
        cache of `cache_size` MB holding at least `min_rows` rows. `per_problem`: the rows are
        the fit's own, not shared with other fits, so that `problem_rows` may narrow them.
        `room`: columns each row leaves for the points of an update (`RowSource.updated`)."""
        matrix = kernel.given_matrix(Xk)
        if matrix is not None:
            return self._given(matrix, cache_size, min_rows, per_problem)
        return self._cached(kernel.training_rows(Xk, self.arrays), cache_size, min_rows, per_problem, room=room)

    def _given(self, matrix, cache_size, min_rows, narrowable):
        """The row source of a given kernel matrix (a precomputed kernel): every row, in float32."""
        return row_source(matrix=matrix)

    def _cached(self, kernel_rows, cache_size, min_rows, narrowable, room=0):
        """A row source of `kernel_rows` in a cache of `cache_size` MB holding at least `min_rows`
        rows, `room` columns to spare in each; the host's are never narrowed (`problem_rows`),
        whatever `narrowable` says."""
        return row_source(kernel_rows, cache_size, min_rows=min_rows, room=room)

    def problem_rows(self, rows: RowSource, kidx: np.ndarray, share: float = 1.0):
        """(row source, kidx in it) for a problem on the rows `kidx` of `rows`: the host keeps
        one source, whose rows every class pair shares. `share`: the part of the fit's cache
        the problem may take (problems solved side by side split it)."""
        return rows, kidx

    def solve_each(self, rows: RowSource, posed: list, settings, side_by_side: bool = True) -> list:
        """Every posed dual of one fit on its `rows` (one-vs-one class pairs), each on the rows
        `problem_rows` gives it: [DualResult]. On the host, in turn: each solve spreads over
        the cores. An unbounded dual's error carries its number (`UnboundedDualError.problem`)."""
        return [self._solve_one(rows, k, p, settings) for k, p in enumerate(posed)]

    def _solve_one(self, rows, k, posed, settings, share=1.0):
        try:
            return solve_posed(posed, *self.problem_rows(rows, posed.problem.kidx, share), settings)
        except UnboundedDualError as err:
            err.problem = k
            raise

    def matrix(self, kernel, Xk, scale=None):
        """K(X, X) in float64 (times scale_i·scale_j when `scale` is given), a fresh array of
        this backend's module that the solver may overwrite."""
        K = kernel.matrix(Xk, self.arrays)
        if scale is not None:
            S = self.xp.asarray(scale)[:, None]
            K *= S
            K *= S.T
        return K

    def centre_rows(self, kernel, Xk, centres, block_elements, scale=None):
        """rows(idx, keep) → S·K(X[idx], X[centres]) (S = diag(`scale`) when given), Nyström's
        K_NM by blocks, arrays of this backend's module."""
        rows = kernel.centre_rows(Xk, centres, block_elements, self.arrays)
        if scale is None:
            return rows
        scale = self.xp.asarray(scale)

        def scaled(idx, keep=False):
            K = rows(idx, keep)
            K *= scale[idx, None]
            return K

        return scaled

    def products(self, centres, X, W, dtype) -> np.ndarray:
        """K(X, centres) @ W on the host (float64), the kernel blocks in `dtype` on a device;
        centres that cannot run there (`runs_on_device` False) compute on the host."""
        return centres.products(X, W, self.arrays if centres.runs_on_device else HOST, dtype)

    def factorise(self, solver: str, kernel, Xk, shift: float, scale=None, exact: bool = False):
        """K + shift·I factorised for `solver` ('cholesky' or 'eigen'; K = S·K(X, X)·S with
        S = diag(`scale`) when given): the result has `solve(B)` and, with `exact`,
        `inverse_diag()`. The host's 'cholesky' without `exact` streams K's rows into packed
        storage (`PackedMixedCholesky`, never the N × N kernel) from PACKED_MIN_N up to
        PACKED_MAX_N rows."""
        n = Xk.shape[0]
        if solver == "cholesky" and not exact and PACKED_MIN_N <= n <= PACKED_MAX_N:
            return PackedMixedCholesky(n, self.lower_rows(kernel, Xk, scale), shift)
        return self.factor_of(solver, self.matrix(kernel, Xk, scale), shift, exact)

    @staticmethod
    def lower_rows(kernel, Xk, scale=None):
        """rows(lo, hi) → K[lo:hi, lo:] on the host (times scale_i·scale_j when `scale` is
        given), in a buffer the next call reuses: the training kernel by blocks of rows."""
        rows = kernel.lower_rows(Xk)
        if scale is None:
            return rows

        def scaled(lo, hi):
            K = rows(lo, hi)
            K *= scale[lo:hi, None]
            K *= scale[None, lo:]
            return K

        return scaled

    def factor_of(self, solver: str, K, shift: float, exact: bool = False):
        """`factorise` for a kernel matrix K already made (K may be overwritten): 'eigen' by
        EigenShift, 'cholesky' in float64 with `exact` (diag(H⁻¹) needs it), else in float32
        refined to float64 (MixedCholeskyShift)."""
        if solver == "eigen":
            return EigenShift(K, self.xp).at(shift)
        return (CholeskyShift if exact else MixedCholeskyShift)(K, shift, self.xp)

    def shifted_scores(self, K, shifts, score):
        """score(factor of K + s·I) for each s (`solvers.dense.factorisations.shifted_scores`)."""
        return shifted_scores(K, shifts, score, self.xp)

    def factors_side_by_side(self, n: int) -> bool:
        """Whether independent factorisations of n-row kernels (a search's kernel parameters) run
        side by side, one per core on one BLAS thread each (their LAPACK calls release the GIL):
        up to SIDE_BY_SIDE_ROWS rows, where OpenBLAS's threaded ones spin at every block step and
        stall beside busy processes. Past it, whole-kernel copies side by side cost memory, and
        they run in turn."""
        return n <= SIDE_BY_SIDE_ROWS


class CudaBackend(HostBackend):
    """An NVIDIA GPU through CuPy: kernel rows and matrices by cuBLAS, Cholesky and eigen by
    cuSOLVER. It runs every solver of the host but the Dask cluster's and the host core's batch
    of small duals (each pair runs on its own stream there)."""

    device = "cuda"
    solvers = HostBackend.solvers - {"dask", "smo-batch"}

    def __init__(self):
        self.arrays = DeviceArrays(cupy_module())
        self.xp = self.arrays.xp

    def auto_solver(self, kernel, n, exact_max):
        return "cholesky"

    def _given(self, matrix, cache_size, min_rows, narrowable):
        """A given kernel matrix placed on the device once in float32 (the solver's precision,
        half float64's memory), the solver reading its rows there, when it takes at most
        DATA_SHARE of the device memory left (`fits_on_device`); else it stays on the host and
        its rows are copied to the device's row cache as the solver asks for them
        (`kernels.device.DeviceMatrix`)."""
        if fits_on_device(self.xp, 4 * matrix.shape[0] * matrix.shape[1]):
            return row_source(matrix=matrix, xp=self.xp)
        return self._cached(DeviceMatrix(self.xp, matrix), cache_size, min_rows, narrowable)

    def _cached(self, device_kernel, cache_size, min_rows, narrowable, share=1.0, room=0):
        """The device's rows cached there in at most `cache_size` MB and at most CACHE_SHARE of
        the device memory left once the data is placed (or streamed: `kernels.device.DeviceKernel`);
        they keep no `room`: updates run on the host."""
        cache_size = min(cache_size, share * CACHE_SHARE * device_memory_free(self.xp) / 2**20)
        rows = row_source(device_kernel, cache_size, min_rows=min_rows)
        rows.narrowable = narrowable
        rows.cache_size = cache_size
        return rows

    def problem_rows(self, rows, kidx, share=1.0):
        """A source of the problem's rows over its own columns when `rows` is narrowable and the
        problem reads fewer rows than it holds (a one-vs-one class pair: rows of 12,000 values
        where the fit's have 60,000, and a cache of as many MB holding five times the rows); the
        `share` of the fit's `cache_size` bounds it, and that share of the memory left."""
        if not getattr(rows, "narrowable", False):
            return rows, kidx
        used, local = np.unique(np.asarray(kidx, dtype=np.int64), return_inverse=True)
        if used.size == rows.n:
            return rows, kidx
        return self._cached(rows.kernel.subset(used), share * rows.cache_size, MIN_ROWS, False, share), \
            local.astype(np.int64)

    def solve_each(self, rows, posed, settings, side_by_side=True):
        """The host's, with up to PROBLEM_STREAMS problems solved at once when each gets rows of
        its own (`rows` narrowable) and `side_by_side`: each from a host thread, on a CUDA
        stream of its own (its kernels run beside the others' on the device's other
        multiprocessors, where one problem's SMO block takes one), with that share of the cache.
        The problems are independent: each gets the α it gets alone."""
        alone = not (side_by_side and getattr(rows, "narrowable", False))
        workers = 1 if alone else min(len(posed), PROBLEM_STREAMS)
        if workers < 2:
            return super().solve_each(rows, posed, settings)
        streams, local = [], threading.local()

        def on_own_stream(k):
            if not hasattr(local, "stream"):
                local.stream = _new_stream(self.xp)
                streams.append(local.stream)
            with local.stream:
                return self._solve_one(rows, k, posed[k], settings, 1.0 / workers)

        # what the fit placed on the device so far is there before other streams read it, and
        # the default stream's unused pool memory free for theirs
        _settle(self.xp, [None])
        try:
            return run_tasks(on_own_stream, [(k,) for k in range(len(posed))], n_jobs=workers)
        finally:
            _settle(self.xp, streams)

    def factorise(self, solver, kernel, Xk, shift, scale=None, exact=False):
        return self.factor_of(solver, self.matrix(kernel, Xk, scale), shift, exact)

    def factors_side_by_side(self, n):
        """False: the device factorises one kernel at a time."""
        return False


#: Problems of one fit (class pairs) solved at once on a GPU, each on a stream of its own.
PROBLEM_STREAMS = 8


def _new_stream(xp):
    """A CUDA stream that does not wait on the default stream (a context manager that makes it
    the thread's current one); for NumPy, which runs in order, a context that does nothing."""
    return contextlib.nullcontext() if xp is np else xp.cuda.Stream(non_blocking=True)


def _settle(xp, streams):
    """Wait for the work queued on each of `streams` (None: the current stream), then give
    their unused pool memory back: a stream's freed blocks serve only that stream, and freeing
    memory waits on the whole device, so it is done once, when the streams are done."""
    if xp is np:
        return
    streams = [s or xp.cuda.get_current_stream() for s in streams]
    for stream in streams:
        stream.synchronize()
    pool = xp.get_default_memory_pool()
    for stream in streams:
        pool.free_all_blocks(stream=stream)


_BACKENDS = {"cpu": HostBackend, "cuda": CudaBackend}


def backend_for(device: str):
    """The backend of `device` ('cpu' or 'cuda'; checked against options.DEVICES by the caller)."""
    return _BACKENDS[device]()


@dataclass(frozen=True)
class WorkerDevice:
    """Where each worker of a cascade (`solvers.smo.cascade`) solves and checks under a device
    other than the CPU: the device its process sees first (a dask-cuda worker sees its own GPU
    as device 0), the backend made there on the worker, never on the client. Its solves read
    kernel rows cached on the device (`training_rows`); its checks form the kernel products
    there in float64, so that the gap they report is the host's to rounding."""

    device: str

    def rows(self, kernel, Xk, cache_mb: float):
        return backend_for(self.device).training_rows(kernel, Xk, cache_mb)

    def products(self, centres, X, coef) -> np.ndarray:
        return backend_for(self.device).products(centres, X, coef[:, None], np.float64)[:, 0]


def on_workers(device: str):
    """Where a cascade's workers run for `device`: their CPUs (`cascade.OnHost`), else
    `WorkerDevice`."""
    return OnHost() if device == "cpu" else WorkerDevice(device)
