"""Fill Numba's on-disk cache once, at install time: `python -m svmkit._warmup`.

Numba compiles each function for each new argument-type signature on its first call (seconds
per function) and caches the machine code on disk; later processes, joblib's and Dask's
workers included, only load it. The estimators hand the loops float64 C-ordered arrays or CSR
(the validation front door converts every other dtype, order and sparse format), so fitting
and predicting every estimator on tiny dense and sparse problems — every kernel, shrinking on
and off, writable and read-only arrays (Numba types the two apart), each row layout of the
linear solver — and the SMO estimators on larger problems, where some loops switch to their
parallel versions, makes every signature they use: a user's first fit compiles nothing.
`compiled_functions` lists the loops, so a test can check that each one is cached.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import joblib
import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from svmkit.models import SVC, SVR, KernelRidge, LinearSVC, LinearSVR, NuSVC, NuSVR, OneClassSVM
from svmkit.solvers._smo_loops import _choose_threading_layer
from svmkit.solvers.packed import PACKED_MIN_N

#: Packages whose modules hold compiled loops (the CUDA kernels and pictures need optional
#: libraries and hold none).
LOOP_PACKAGES = ("svmkit.solvers", "svmkit.kernels")

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")
#: Rows of the tiny problems, and of the larger ones: past the sizes at which RBF kernel rows
#: (2^18 values) and gradient updates (2048 variables) switch to their parallel loops.
TINY, LARGER = 24, 2100


def compiled_functions():
    """Every Numba-compiled function of svmkit, by its module and name; those inlined into
    their callers (inline="always") are never compiled alone and are left out."""
    from numba.core.dispatcher import Dispatcher

    found = {}
    for package in LOOP_PACKAGES:
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
            if "cuda" in info.name or info.name.endswith("device"):
                continue
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if isinstance(value, Dispatcher) and value.py_func.__module__ == module.__name__ \
                        and value.targetoptions.get("inline", "never") == "never":
                    found[f"{module.__name__}.{name}"] = value
    return found


def cache_folders():
    """The folders of Numba's cache that svmkit's compiled functions use."""
    return sorted({d._cache._cache_path for d in compiled_functions().values()})


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


def smo_tiny(X):
    """Every SMO estimator × kernel × shrinking on a tiny problem, also on read-only data and
    with the fitted model memory-mapped."""
    with tempfile.TemporaryDirectory() as folder:
        for kernel in KERNELS:
            data = X @ X.T if kernel == "precomputed" else X
            for shrinking in (True, False):
                for est in estimators(kernel, shrinking):
                    y = target(est, TINY)
                    est.fit(data, y).predict(data)
                    est.fit(read_only(data), y).predict(read_only(data))
                    memory_mapped(est, folder).predict(data)


def smo_larger(X):
    """Every SMO estimator with the RBF kernel on a larger problem, where some loops switch to
    their parallel versions; a few iterations reach every loop, converging would only take longer."""
    for est in estimators("rbf", True, max_iter=50):
        est.fit(X, target(est, LARGER)).predict(X)


def closed_forms(X):
    """Kernel ridge (with leave-one-out), the least-squares SVMs, kernel logistic regression and
    the hard ε-band on a tiny problem."""
    from svmkit.models import LSSVC, LSSVR, KernelLogisticRegression
    from svmkit.models.band import HardBandSVR

    ramp, classes = target(None, TINY), np.arange(TINY) % 3
    for loo in (False, True):
        KernelRidge(kernel="rbf", gamma=0.5, loo=loo).fit(X, ramp).predict(X)
    LSSVR(gamma=0.5).fit(X, ramp).predict(X)
    LSSVC(gamma=0.5).fit(X, classes).predict(X)
    KernelLogisticRegression(gamma=0.5).fit(X, classes).predict(X)
    if not sp.issparse(X):
        HardBandSVR(epsilon=10.0 * np.abs(ramp).max()).fit(X, ramp).predict(X)
    # the parallel loop a process runs to choose Numba's threading layer when its first
    # parallel work is a search's concurrent solves
    _choose_threading_layer(2)


def packed(X):
    """Kernel ridge on a problem large enough for its packed solver."""
    KernelRidge(kernel="rbf", gamma=0.5).fit(X, target(None, X.shape[0])).predict(X[:TINY])


def linear_layouts(X):
    """X in each row layout the linear solvers compile a loop for: dense (writable and
    read-only), CSR with float64 and with float32-exact values, and a binary pattern (no values)."""
    if not sp.issparse(X):
        return [X, read_only(X)]
    halves = X.copy()
    halves.data = np.round(halves.data * 2.0) / 2.0 + 0.5
    return [X, halves, (X != 0).astype(np.float64)]


def linear_estimators():
    """LinearSVC and LinearSVR with each of LIBLINEAR's solvers that they offer."""
    return [LinearSVC(dual=True), LinearSVC(loss="hinge"), LinearSVC(dual=False),
            LinearSVC(penalty="l1", dual=False), LinearSVC(multi_class="crammer_singer"), LinearSVR(),
            LinearSVR(loss="squared_epsilon_insensitive", dual=False)]


def linear(X):
    """Every linear solver (`linear_estimators`) on every row layout."""
    for rows in linear_layouts(X):
        for est in linear_estimators():
            est.fit(rows, target(est, TINY)).predict(rows)


#: The warm-up's steps: (name, what it runs, on which problems), in two groups of about equal
#: compile time, run side by side by `warm_up`. The first holds the SMO solver and its Newton
#: step, the largest compiled code.
STEPS = (
    (("smo tiny", smo_tiny, TINY), ("smo larger", smo_larger, LARGER)),
    (("closed forms", closed_forms, TINY), ("packed", packed, PACKED_MIN_N), ("linear", linear, TINY)),
)


def run_steps(group):
    """Run every step of one group of STEPS (all of them for None)."""
    groups = STEPS if group is None else (STEPS[group],)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for steps in groups:
            for _, step, n in steps:
                for X in problems(n):
                    step(X)


def warm_up(processes=len(STEPS)):
    """Fill the cache: each group of STEPS in its own process, side by side, then every step
    once more here, which only loads from the cache what the groups compiled.

    The final pass makes the cache whole whatever the processes did: Numba saves each
    function's index of signatures by reading, extending and rewriting it, so two processes
    saving different signatures of one function at the same moment may drop one, which the
    final pass compiles again."""
    if processes > 1:
        children = [subprocess.Popen([sys.executable, "-m", "svmkit._warmup", "--group", str(g)])
                    for g in range(len(STEPS))]
        failed = [child.args for child in children if child.wait() != 0]
        if failed:
            raise RuntimeError(f"the warm-up failed in {failed}")
    run_steps(None)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m svmkit._warmup", description="Fill Numba's cache.")
    parser.add_argument("--group", type=int, help="run one group of steps only (in a child process)")
    parser.add_argument("--processes", type=int, default=len(STEPS), help="1: every step in this process")
    args = parser.parse_args(argv)
    if args.group is not None:
        run_steps(args.group)
        return
    start = time.perf_counter()
    warm_up(args.processes)
    print(f"svmkit: Numba's cache is filled ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
