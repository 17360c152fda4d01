"""Time the SMO models' fit and predict: svmkit beside scikit-learn, LIBSVM, ThunderSVM (CPU)
and scikit-learn-intelex on the same data and parameters (RBF, gamma='scale' resolved to one
number per data set and given to every system; tol 1e-3; each system's default cache, or
`--cache MB` given to every system).

    python benchmarks/bench_svc.py [--sets a9a,w8a] [--systems svmkit,scikit-learn] [--timeout 900] [--cache 200]

Every (data set, system) runs in its own process, one after another, so no system inherits
another's memory or threads, and a peer that runs past --timeout seconds is reported as such
instead of stalling the run. Prints one row per data set and system: fit and predict seconds,
accuracy (classification) or test MSE (regression), #SV, the ratios of scikit-learn's and
scikit-learn-intelex's times to this system's, and for svmkit the Gram floor: the seconds of one
float32 GEMM of its support vectors' rows against every training row (`gram_floor`), timed in
the same process after the fit, with the fit's multiple of it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file, load_svmlight_files, make_classification, make_regression

from _results import write  # beside this script, whose folder is on sys.path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _split(X, y, frac, seed=0):
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    cut = int(round(frac * X.shape[0]))
    return X[perm[:cut]], y[perm[:cut]], X[perm[cut:]], y[perm[cut:]]


def _first(Xy, n):
    X, y = Xy
    return X[:n], y[:n], X[n:], y[n:]


def _synthetic(n):
    X, y = make_classification(n + n // 5, 50, n_informative=20, random_state=0)
    return X[:n], y[:n], X[n:], y[n:]


def _standardised(Xtr, ytr, Xte, yte):
    """Features and target standardised with the training split's mean and deviation."""
    Xtr, Xte = (np.asarray(X.toarray() if sp.issparse(X) else X) for X in (Xtr, Xte))
    mx, sx = Xtr.mean(0), Xtr.std(0)
    my, sy = ytr.mean(), ytr.std()
    return (Xtr - mx) / sx, (ytr - my) / sy, (Xte - mx) / sx, (yte - my) / sy


def _regression(n):
    X, y = make_regression(n + n // 5, 20, n_informative=10, noise=10.0, random_state=0)
    return _standardised(X[:n], y[:n], X[n:], y[n:])


#: name → (model, loader). Models: svc (C=1), nusvc (nu=0.5), svr (C=1, epsilon=0.1).
SETS = {
    "synthetic 10k x 50": ("svc", lambda: _synthetic(10_000)),
    "synthetic 50k x 50": ("svc", lambda: _synthetic(50_000)),
    "a9a": ("svc", lambda: load_svmlight_files([str(DATA / "a9a"), str(DATA / "a9a.t")])),
    "w8a (80/20)": ("svc", lambda: _split(*load_svmlight_file(str(DATA / "w8a")), 0.8)),
    "satimage": ("svc", lambda: load_svmlight_files([str(DATA / "satimage.scale"),
                                                     str(DATA / "satimage.scale.t")])),
    "mnist.t (8k/2k)": ("svc", lambda: _first(load_svmlight_file(str(DATA / "mnist.scale.t.bz2"),
                                                                 n_features=780), 8000)),
    "nu-SVC synthetic 10k x 50": ("nusvc", lambda: _synthetic(10_000)),
    "nu-SVC satimage": ("nusvc", lambda: load_svmlight_files([str(DATA / "satimage.scale"),
                                                             str(DATA / "satimage.scale.t")])),
    "SVR cadata (80/20)": ("svr", lambda: _standardised(
        *_split(*load_svmlight_file(str(DATA / "derived" / "cadata")), 0.8))),
    "SVR synthetic 20k x 20": ("svr", lambda: _regression(20_000)),
}

_CLASSES = {"svc": "SVC", "nusvc": "NuSVC", "svr": "SVR"}
_PARAMS = {"svc": {"C": 1.0}, "nusvc": {"nu": 0.5}, "svr": {"C": 1.0, "epsilon": 0.1}}
_LIBSVM_OPTS = {"svc": "-s 0 -c 1", "nusvc": "-s 1 -n 0.5", "svr": "-s 3 -c 1 -p 0.1"}


def _int32(X):
    """scikit-learn's SVC rejects the int64-indexed CSR that load_svmlight_file can return."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
    return X


def _scale_gamma(X):
    var = (X.multiply(X).mean() - X.mean() ** 2) if sp.issparse(X) else X.var()
    return float(1.0 / (X.shape[1] * var))


def _estimator(module, model, gamma, cache):
    import importlib
    cls = getattr(importlib.import_module(module), _CLASSES[model])
    extra = {} if cache is None else {"cache_size": cache}
    return cls(kernel="rbf", gamma=gamma, **_PARAMS[model], **extra)


def _n_sv(m):
    if hasattr(m, "support_") and getattr(m, "support_", None) is not None and np.size(m.support_):
        return int(np.size(m.support_))
    if hasattr(m, "n_support_"):
        return int(np.sum(m.n_support_))
    return int(np.sum(m.n_sv))


def _support(m):
    """svmkit's support-vector row indices (for the Gram floor), None for the peers."""
    return np.asarray(m.support_) if hasattr(m, "objective_") else None


def _solution(m):
    """svmkit's dual objective(s), intercept(s) and pair updates, to compare two builds' fits."""
    if not hasattr(m, "objective_"):
        return {}
    return {"objective": np.ravel(m.objective_).tolist(), "intercept": np.ravel(m.intercept_).tolist(),
            "n_iter": np.ravel(m.n_iter_).tolist()}


def _timed(m, Xtr, ytr, Xte):
    t = time.perf_counter()
    m.fit(Xtr, ytr)
    fit = time.perf_counter() - t
    t = time.perf_counter()
    pred = m.predict(Xte)
    return fit, time.perf_counter() - t, np.asarray(pred), _n_sv(m), _solution(m), _support(m)


def run_libsvm(model, Xtr, ytr, Xte, gamma, cache):
    """libsvm-official, predicting row by row as its svm_predict does. Its svm_predict itself
    sizes the decision buffer for one classifier on ν-SVC (it names NU_SVC where NU_SVR is
    meant), which overruns on multiclass ν-SVC and crashes the process."""
    from libsvm.svm import gen_svm_nodearray, libsvm
    from libsvm.svmutil import svm_problem, svm_train
    prob = svm_problem(ytr, sp.csr_matrix(Xtr))  # the model points into it: keep it alive
    t = time.perf_counter()
    cache_opt = "" if cache is None else f" -m {cache}"
    fitted = svm_train(prob, f"{_LIBSVM_OPTS[model]} -t 2 -g {gamma!r} -e 0.001 -q{cache_opt}")
    fit = time.perf_counter() - t
    Xte = sp.csr_matrix(Xte)
    t = time.perf_counter()
    labels = []
    for i in range(Xte.shape[0]):
        row = slice(Xte.indptr[i], Xte.indptr[i + 1])
        xi, _ = gen_svm_nodearray((Xte.indices[row], Xte.data[row]))
        labels.append(libsvm.svm_predict(fitted, xi))
    return fit, time.perf_counter() - t, np.asarray(labels), fitted.get_nr_sv(), {}, None


def run_system(system, model, Xtr, ytr, Xte, gamma, cache=None):
    if system == "libsvm":
        return run_libsvm(model, Xtr, ytr, Xte, gamma, cache)
    module = {"svmkit": "svmkit", "scikit-learn": "sklearn.svm", "sklearn-intelex": "sklearnex.svm",
              "thundersvm-cpu": "thundersvm"}[system]
    if system == "thundersvm-cpu":
        Xtr, Xte = (X.toarray() if sp.issparse(X) else X for X in (Xtr, Xte))  # its CSR path crashes
    elif system != "svmkit":
        Xtr, Xte = _int32(Xtr), _int32(Xte)
    return _timed(_estimator(module, model, gamma, cache), Xtr, ytr, Xte)


SYSTEMS = ("svmkit", "scikit-learn", "sklearn-intelex", "thundersvm-cpu", "libsvm")


def warm_up(system):
    """Touch 2 GB of memory (on this kind of VM a page's first touch is slow: some 2.5 ms per
    MB), the same for every system; load svmkit's compiled loops, as a peer's library is
    loaded before its fit."""
    block = np.ones(2**28)
    del block
    if system == "svmkit":
        import svmkit
        X, y = make_classification(500, 10, random_state=0)
        svmkit.SVC().fit(X, y).predict(X)


#: Support-vector rows per GEMM of the Gram floor (bounds its buffer: 2,048 × n float32).
_FLOOR_ROWS = 2048


def gram_floor(X, support) -> float:
    """Seconds of the float32 GEMM of the support vectors' rows against every training row,
    X_sv X_trᵀ, on every core (a block of rows at a time into one buffer): the work any exact
    solver does at least once, each support vector's kernel row being needed for the gradient."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float32)
    S = X[support]
    out = np.empty((min(_FLOOR_ROWS, S.shape[0]), X.shape[0]), dtype=np.float32)
    np.matmul(S[: out.shape[0]], X.T, out=out)  # the buffer's pages faulted in outside the timing
    t = time.perf_counter()
    for lo in range(0, S.shape[0], _FLOOR_ROWS):
        block = S[lo:lo + _FLOOR_ROWS]
        np.matmul(block, X.T, out=out[: block.shape[0]])
    return time.perf_counter() - t


def worker(set_name, system, cache=None):
    model, load = SETS[set_name]
    Xtr, ytr, Xte, yte = load()
    gamma = _scale_gamma(Xtr)
    warm_up(system)
    fit, pred_t, pred, nsv, solution, support = run_system(system, model, Xtr, ytr, Xte, gamma, cache)
    score = float(np.mean((pred - yte) ** 2)) if model == "svr" else float(100 * np.mean(pred == yte))
    floor = {} if support is None else {"gram_floor": gram_floor(Xtr, support)}
    print(json.dumps({"fit": fit, "predict": pred_t, "score": score, "n_sv": int(nsv), **solution, **floor}))


def _run_isolated(set_name, system, timeout, cache):
    extra = [] if cache is None else ["--cache", str(cache)]
    try:
        out = subprocess.run([sys.executable, __file__, "--worker", set_name, system, *extra],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s"
    if out.returncode != 0:
        return "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="", help="comma-separated substrings of data set names")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated systems")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed to one system on one set")
    ap.add_argument("--cache", type=float, default=None,
                    help="cache_size in MB given to every system (default: each system's own)")
    ap.add_argument("--worker", nargs=2, metavar=("SET", "SYSTEM"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(*args.worker, args.cache)
    wanted = [s for s in SETS if not args.sets or any(w in s for w in args.sets.split(","))]
    systems = [s for s in args.systems.split(",") if s]
    print(f"# machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}; cache: "
          f"{'each system its default' if args.cache is None else f'{args.cache:g} MB for every system'}")
    print("| data set | system | fit s | predict s | accuracy % / MSE | #SV | fit vs sklearn | "
          "predict vs sklearn | fit vs intelex | predict vs intelex | Gram floor s | fit / floor |")
    print("|" + "---|" * 12)
    table = []
    for name in wanted:
        rows = {s: _run_isolated(name, s, args.timeout, args.cache) for s in systems}
        ref, ex = rows.get("scikit-learn"), rows.get("sklearn-intelex")
        for sysname, row in rows.items():
            if isinstance(row, str):
                print(f"| {name} | {sysname} | {row} | | | | | | | | | |")
                table.append({"set": name, "system": sysname, "error": row})
                continue

            def ratio(base, key):
                return f"{base[key] / row[key]:.2f}x" if isinstance(base, dict) else "-"

            floor = (f"{row['gram_floor']:.2f} | {row['fit'] / row['gram_floor']:.2f}x" if "gram_floor" in row
                     else " | ")
            print(f"| {name} | {sysname} | {row['fit']:.2f} | {row['predict']:.3f} | {row['score']:.4g} | "
                  f"{row['n_sv']} | {ratio(ref, 'fit')} | {ratio(ref, 'predict')} | {ratio(ex, 'fit')} | "
                  f"{ratio(ex, 'predict')} | {floor} |")
            speedup = {f"{key} {peer}/this": base[key] / row[key] if isinstance(base, dict) else None
                       for peer, base in (("sklearn", ref), ("intelex", ex)) for key in ("fit", "predict")}
            floor_ratio = {"fit/gram_floor": row["fit"] / row["gram_floor"]} if "gram_floor" in row else {}
            table.append({"set": name, "system": sysname, **row, **speedup, **floor_ratio})
        sys.stdout.flush()
    write("bench_svc", table, notes="Seconds of fit and predict per data set and system; `fit sklearn/this` is "
          "scikit-learn's fit seconds over this system's (above 1: faster than scikit-learn), `fit intelex/this` "
          "scikit-learn-intelex's; `gram_floor` (svmkit's rows) the seconds of one float32 GEMM of the support "
          "vectors' rows against every training row, and `fit/gram_floor` the fit's multiple of it.",
          plots=[{"kind": "bars", "value": "fit sklearn/this", "label": ["set", "system"], "reference": 1,
                  "xscale": "log", "xlabel": "scikit-learn fit s / this system's"}])


if __name__ == "__main__":
    main()
