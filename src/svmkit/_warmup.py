"""Fill Numba's on-disk cache once, at install time: `python -m svmkit._warmup`.

Numba compiles each function for each new argument-type signature on its first call (seconds
per function) and caches the machine code on disk; later processes only load it. Fitting and
predicting every estimator on tiny dense and sparse problems, with every kernel and shrinking
on and off, on writable and read-only arrays (Numba types the two apart), and then on larger
problems, where some loops switch to parallel versions, makes every signature the estimators
use, so a user's first fit compiles nothing.
"""

from __future__ import annotations

import tempfile
import time
import warnings
from pathlib import Path

import joblib
import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from svmkit.models import SVC, SVR, KernelRidge, LinearSVC, LinearSVR, NuSVC, NuSVR, OneClassSVM

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")
#: Rows of the tiny problems, and of the larger ones: past the sizes at which RBF kernel rows
#: (2^18 values) and gradient updates (2048 variables) switch to their parallel loops.
TINY, LARGER = 24, 2100


def problems(n, seed=0):
    """Data sets of n rows: dense with few features and with many (RBF rows of few features
    are computed from the differences, of many through a GEMM), and CSR sparse enough to stay
    CSR when training and predicting (each of its 50·n features is used by one row at most)."""
    rng = np.random.default_rng(seed)
    cols = rng.choice(50 * n, size=2 * n, replace=False)
    sparse = sp.csr_matrix((rng.standard_normal(2 * n), cols, np.arange(0, 2 * n + 1, 2)), shape=(n, 50 * n))
    return [rng.standard_normal((n, 3)), rng.standard_normal((n, 40)), sparse]


def estimators(kernel, shrinking, **params):
    """Every estimator once, with parameters that are feasible on these problems."""
    common = dict(kernel=kernel, gamma=0.5, shrinking=shrinking, **params)
    return [SVC(**common), NuSVC(nu=0.3, **common), SVR(**common), NuSVR(**common), OneClassSVM(**common)]


def target(est, n):
    """Three classes for a classifier (one-vs-one over several pairs), a ramp otherwise."""
    return np.arange(n) % 3 if isinstance(est, (SVC, NuSVC, LinearSVC)) else np.linspace(-1.0, 1.0, n)


def read_only(X):
    """A copy of X whose arrays are write-protected, as data memory-mapped read-only is."""
    X = X.copy()
    for part in (X.data, X.indices, X.indptr) if sp.issparse(X) else (X,):
        part.setflags(write=False)
    return X


def memory_mapped(est, folder):
    """`est` saved and loaded back by joblib with mmap_mode="r", so its arrays are read-only."""
    path = Path(folder) / "model.joblib"
    joblib.dump(est, path)
    return joblib.load(path, mmap_mode="r")


def linear_estimators():
    """LinearSVC and LinearSVR with each of LIBLINEAR's solvers that they offer."""
    return [LinearSVC(dual=True), LinearSVC(loss="hinge"), LinearSVC(dual=False),
            LinearSVC(penalty="l1", dual=False), LinearSVC(multi_class="crammer_singer"), LinearSVR(),
            LinearSVR(loss="squared_epsilon_insensitive", dual=False)]


def warm_linear():
    """Every linear solver on the row layouts its loops take: dense (writable and read-only)
    and CSR of real values, of small integers (stored as float32) and of a binary pattern."""
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((TINY, 5))
    pattern = sp.csr_matrix((rng.random((TINY, 5)) < 0.5).astype(np.float64))
    integers = sp.csr_matrix(pattern.multiply(rng.integers(1, 4, size=(TINY, 5))))
    for X in (dense, read_only(dense), pattern, integers, sp.csr_matrix(dense)):
        for est in linear_estimators():
            est.fit(X, target(est, TINY)).predict(X)


def warm_up():
    """Fit and predict every estimator × kernel × shrinking on the tiny problems, also on
    read-only data and with the fitted model memory-mapped, and kernel ridge's packed solver
    there; then every estimator on the larger problems with the RBF kernel, the one kernel
    whose loops depend on the size; and the linear SVMs (`warm_linear`)."""
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for X in problems(TINY):
            for kernel in KERNELS:
                data = X @ X.T if kernel == "precomputed" else X
                for shrinking in (True, False):
                    for est in estimators(kernel, shrinking):
                        y = target(est, TINY)
                        est.fit(data, y).predict(data)
                        est.fit(read_only(data), y).predict(read_only(data))
                        memory_mapped(est, folder).predict(data)
            for loo in (False, True):
                KernelRidge(gamma=0.5, loo=loo).fit(X, target(None, TINY)).predict(X)
        for X in problems(LARGER):
            # a few iterations reach every loop; converging would only take longer
            for est in estimators("rbf", True, max_iter=50):
                est.fit(X, target(est, LARGER)).predict(X)
        warm_linear()


if __name__ == "__main__":
    start = time.perf_counter()
    warm_up()
    print(f"svmkit: Numba's cache is filled ({time.perf_counter() - start:.1f} s)")
