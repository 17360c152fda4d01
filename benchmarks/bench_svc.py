"""Time SVC fit and predict: svmkit beside scikit-learn, LIBSVM, ThunderSVM (CPU) and
scikit-learn-intelex, in the same run, on the same data and parameters (RBF, C=1, gamma='scale'
resolved to one number and given to every system).

    python benchmarks/bench_svc.py [--sets a9a,w8a] [--systems svmkit,sklearn]

Prints one row per data set and system: fit and predict seconds, accuracy, #SV, and the
ratios of scikit-learn's and scikit-learn-intelex's times to this system's.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file, load_svmlight_files, make_classification

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _split(X, y, frac, seed=0):
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    cut = int(round(frac * X.shape[0]))
    return X[perm[:cut]], y[perm[:cut]], X[perm[cut:]], y[perm[cut:]]


def _synthetic(n):
    X, y = make_classification(n + n // 5, 50, n_informative=20, random_state=0)
    return X[:n], y[:n], X[n:], y[n:]


def load_sets():
    return {
        "synthetic 10k x 50": lambda: _synthetic(10_000),
        "synthetic 50k x 50": lambda: _synthetic(50_000),
        "a9a": lambda: load_svmlight_files([str(DATA / "a9a"), str(DATA / "a9a.t")]),
        "w8a (80/20)": lambda: _split(*load_svmlight_file(str(DATA / "w8a")), 0.8),
        "satimage": lambda: load_svmlight_files([str(DATA / "satimage.scale"), str(DATA / "satimage.scale.t")]),
        "mnist.t (8k/2k)": lambda: _first(load_svmlight_file(str(DATA / "mnist.scale.t.bz2"), n_features=780), 8000),
    }


def _first(Xy, n):
    X, y = Xy
    return X[:n], y[:n], X[n:], y[n:]


def _int32(X):
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
    return X


def _scale_gamma(X):
    var = (X.multiply(X).mean() - X.mean() ** 2) if sp.issparse(X) else X.var()
    return float(1.0 / (X.shape[1] * var))


def run_svmkit(Xtr, ytr, Xte, gamma):
    import svmkit
    m = svmkit.SVC(C=1.0, gamma=gamma)
    return _timed(m, Xtr, ytr, Xte, lambda: m.support_.size)


def run_sklearn(Xtr, ytr, Xte, gamma):
    from sklearn.svm import SVC
    m = SVC(C=1.0, gamma=gamma)
    return _timed(m, _int32(Xtr), ytr, _int32(Xte), lambda: m.support_.size)


def run_intelex(Xtr, ytr, Xte, gamma):
    from sklearnex.svm import SVC
    m = SVC(C=1.0, gamma=gamma)
    return _timed(m, _int32(Xtr), ytr, _int32(Xte), lambda: int(m.n_support_.sum()))


def run_thundersvm(Xtr, ytr, Xte, gamma):
    from thundersvm import SVC
    m = SVC(C=1.0, gamma=gamma, kernel="rbf")
    Xtr = _int32(Xtr)
    return _timed(m, Xtr, ytr, _int32(Xte), lambda: int(np.sum(m.n_sv)) if hasattr(m, "n_sv") else m.support_.size)


def run_libsvm(Xtr, ytr, Xte, gamma):
    from libsvm.svmutil import svm_predict, svm_problem, svm_train
    t = time.perf_counter()
    model = svm_train(svm_problem(ytr, sp.csr_matrix(Xtr)), f"-s 0 -t 2 -c 1 -g {gamma!r} -e 0.001 -q")
    fit = time.perf_counter() - t
    t = time.perf_counter()
    labels, _, _ = svm_predict([], sp.csr_matrix(Xte), model, "-q")
    return fit, time.perf_counter() - t, np.asarray(labels), model.get_nr_sv()


def _timed(m, Xtr, ytr, Xte, n_sv):
    t = time.perf_counter()
    m.fit(Xtr, ytr)
    fit = time.perf_counter() - t
    t = time.perf_counter()
    pred = m.predict(Xte)
    return fit, time.perf_counter() - t, np.asarray(pred), n_sv()


SYSTEMS = {"svmkit": run_svmkit, "scikit-learn": run_sklearn, "sklearn-intelex": run_intelex,
           "thundersvm-cpu": run_thundersvm, "libsvm": run_libsvm}


def warm_up():
    """Touch memory once and load svmkit's compiled loops, so no system pays first-use costs."""
    block = np.ones(2**28)
    del block
    import svmkit
    X, y = make_classification(500, 10, random_state=0)
    svmkit.SVC().fit(X, y).predict(X)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sets", default="", help="comma-separated substrings of data set names")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated systems")
    args = ap.parse_args(argv)
    sets = load_sets()
    wanted = [s for s in sets if not args.sets or any(w in s for w in args.sets.split(","))]
    systems = [s for s in args.systems.split(",") if s]
    warm_up()
    print(f"# machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    header = (f"| data set | system | fit s | predict s | accuracy % | #SV | fit vs sklearn | "
              f"predict vs sklearn | fit vs intelex | predict vs intelex |")
    print(header)
    print("|" + "---|" * 10)
    for name in wanted:
        Xtr, ytr, Xte, yte = sets[name]()
        gamma = _scale_gamma(Xtr)
        rows = {}
        for sysname in systems:
            fit, pred_t, pred, nsv = SYSTEMS[sysname](Xtr, ytr, Xte, gamma)
            rows[sysname] = (fit, pred_t, 100 * np.mean(pred == yte), nsv)
        ref = rows.get("scikit-learn")
        ex = rows.get("sklearn-intelex")
        for sysname, (fit, pred_t, acc, nsv) in rows.items():
            r = lambda base, i, mine: f"{base[i] / mine:.2f}x" if base else "-"
            print(f"| {name} | {sysname} | {fit:.2f} | {pred_t:.3f} | {acc:.2f} | {nsv} | "
                  f"{r(ref, 0, fit)} | {r(ref, 1, pred_t)} | {r(ex, 0, fit)} | {r(ex, 1, pred_t)} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
