"""First use: how long a new user waits for svmkit's compiled (Numba) loops.

    python benchmarks/first_use.py [--estimators SVC,LinearSVC,...] [--no-first-fits]
    python benchmarks/first_use.py --battery     # one fresh process: new cache entries, as JSON

Prints, each measured in fresh processes:
1. the warm-up's seconds (`python -m svmkit._warmup`, as `make install` runs it) with an empty
   Numba cache (a new temporary NUMBA_CACHE_DIR, so the installed cache is left alone);
2. the new cache entries that a battery of ordinary inputs then adds in a fresh process —
   float32, Fortran-ordered, non-contiguous and int64 arrays, a DataFrame, every SciPy sparse
   format (with int32 and int64 indices, float32 values), every estimator and kernel,
   `SVMSearchCV` and `cross_val_score(n_jobs=2)` — 0 when the warm-up covers every compiled
   loop and signature;
3. the first fit of each estimator on heart_scale with an empty cache (a plain `pip install`
   without the warm-up), the import excluded;
(The default-vs-one-thread ratios with a core busy elsewhere: `benchmarks/bench_threads.py`.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from _results import write  # beside this script, whose folder is on sys.path

HEART = Path(__file__).resolve().parent.parent / "tests" / "data" / "heart_scale"
ESTIMATORS = ("SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "KernelRidge", "LSSVC", "LSSVR",
              "KernelLogisticRegression", "LinearSVC", "LinearSVR", "HardBandSVR")
REGRESSORS = {"SVR", "NuSVR", "KernelRidge", "LSSVR", "LinearSVR", "HardBandSVR"}
#: Parameters an estimator needs on these targets (a ramp in [-1, 1]): the hard band must be
#: wider than the best linear fit's largest residual.
NEEDS = {"HardBandSVR": {"epsilon": 2.0}}


def estimator(name, **params):
    """A fresh estimator by its public name (HardBandSVR lives in svmkit.band)."""
    import svmkit

    home = svmkit.band if name == "HardBandSVR" else svmkit
    return getattr(home, name)(**{**NEEDS.get(name, {}), **params})


def heart_scale():
    """heart_scale as dense float64 X and labels ±1."""
    from svmkit.io.data import load_svmlight

    X, y = load_svmlight(str(HEART))
    return (X.toarray() if hasattr(X, "toarray") else X), y


def layouts(X):
    """X as a user may hand it over: every dtype, order and container the estimators accept."""
    import numpy as np
    import scipy.sparse as sp

    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    csr = sp.csr_matrix(X)
    csr64 = csr.copy()
    csr64.indices, csr64.indptr = csr64.indices.astype(np.int64), csr64.indptr.astype(np.int64)
    found = {
        "float64": X, "float32": X.astype(np.float32), "fortran": np.asfortranarray(X),
        "strided": wide[:, ::2], "int64": np.rint(4 * X).astype(np.int64), "list": X.tolist(),
        "csr": csr, "csr-int64": csr64, "csr-float32": csr.astype(np.float32), "csc": csr.tocsc(),
        "coo": csr.tocoo(), "lil": csr.tolil(), "dok": csr.todok(), "bsr": csr.tobsr(),
        "csr-binary": sp.csr_matrix((X > 0).astype(np.float64)),
    }
    try:
        import pandas as pd
    except ImportError:  # pandas is optional
        return found
    found["dataframe"] = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    return found


def battery():
    """Fit and predict every estimator on every layout, SVC with every kernel and probability
    estimates, a search and cross-validation in two worker processes."""
    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import cross_val_score

    from svmkit.model_selection import SVMSearchCV

    X, y = heart_scale()
    X, y = X[:120], y[:120]
    target = {False: y, True: np.linspace(-1.0, 1.0, y.size)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for data in layouts(X).values():
            for name in ESTIMATORS:
                if name == "HardBandSVR" and hasattr(data, "tocsr"):
                    continue  # dense input only
                model = estimator(name).fit(data, target[name in REGRESSORS])
                model.predict(data)
            for kernel in ("linear", "poly", "sigmoid"):
                estimator("SVC", kernel=kernel).fit(data, y).decision_function(data)
        dense = np.asarray(X)
        estimator("SVC", kernel="precomputed").fit(dense @ dense.T, y).predict(dense @ dense.T)
        estimator("SVC", probability=True).fit(dense, y).predict_proba(dense)
        estimator("KernelRidge", loo=True).fit(dense, target[True])
        SVMSearchCV(estimator("SVC"), param_grid={"C": [1.0, 4.0], "gamma": [0.1, 0.5]}).fit(dense, y)
        for name in ("SVC", "LinearSVC", "KernelRidge"):
            cross_val_score(estimator(name), dense, target[name in REGRESSORS], cv=3, n_jobs=2)


def cache_entries():
    """Every file of Numba's cache (index and code) in the places svmkit's loops are cached."""
    from svmkit._warmup import cache_folders

    return {str(p) for folder in cache_folders() for p in Path(folder).glob("*.nb[ic]")}


def run_battery():
    """The battery in this process; prints the cache files it added, as JSON."""
    before = cache_entries()
    battery()
    print(json.dumps(sorted(cache_entries() - before)))


def fresh(code, cache_dir=None, timeout=1800):
    """Run `code` in a fresh interpreter (with its own Numba cache folder when given); its
    last line of output."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         timeout=timeout)
    return out.stdout.strip().splitlines()[-1]


FIRST_FIT = """
import sys, time, warnings
sys.path.insert(0, {here!r})
from first_use import estimator, heart_scale, REGRESSORS
import numpy as np
X, y = heart_scale()
est = estimator({name!r})
y = np.linspace(-1.0, 1.0, y.size) if {name!r} in REGRESSORS else y
warnings.simplefilter("ignore")
start = time.perf_counter(); est.fit(X, y); print(time.perf_counter() - start)
"""


def warm_up_seconds(cache_dir):
    """Wall seconds of `python -m svmkit._warmup` in a fresh process on `cache_dir`."""
    start = time.perf_counter()
    fresh("import runpy; runpy.run_module('svmkit._warmup', run_name='__main__')", cache_dir)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battery", action="store_true", help="run the battery here, print new cache files")
    parser.add_argument("--estimators", default=",".join(ESTIMATORS))
    parser.add_argument("--no-first-fits", action="store_true")
    args = parser.parse_args()
    if args.battery:
        run_battery()
        return
    here = str(Path(__file__).resolve().parent)
    print(f"# {os.cpu_count()} cores; Python {sys.version.split()[0]}")
    table = []
    with tempfile.TemporaryDirectory() as cache:
        warm = warm_up_seconds(cache)
        print(f"warm-up, empty cache: {warm:.1f} s")
        table.append({"what": "warm-up, empty cache", "seconds": warm})
        added = json.loads(fresh(f"import sys; sys.path.insert(0, {here!r}); import first_use; "
                                 "first_use.run_battery()", cache))
        print(f"new cache entries after the battery: {len(added)}")
        table.append({"what": "new cache entries after the battery", "count": len(added)})
        for path in added:
            print(f"#   {Path(path).name}")
    if not args.no_first_fits:
        for name in args.estimators.split(","):
            with tempfile.TemporaryDirectory() as cache:
                seconds = float(fresh(FIRST_FIT.format(here=here, name=name), cache))
            print(f"first fit on heart_scale, empty cache: {name:26s} {seconds:6.1f} s")
            table.append({"what": f"first fit, empty cache: {name}", "seconds": seconds})
    write("first_use", table, notes="Compilation on first use: the warm-up on an empty Numba cache, the cache "
          "entries a battery of ordinary inputs adds after it (0: nothing compiles again), and each estimator's "
          "first fit on an empty cache.",
          plots=[{"kind": "bars", "value": "seconds", "label": ["what"], "xlabel": "seconds"}])


if __name__ == "__main__":
    main()
