"""Time the closed-form kernel models: svmkit's KernelRidge beside scikit-learn's, the (λ, γ)
search by exact leave-one-out beside GridSearchCV(KernelRidge, 5 folds), and Nyström at large N.

    python benchmarks/bench_ridge.py [--parts single,search,nystrom] [--sizes 5000,10000,20000]
        [--nystrom-sizes 200000,1000000] [--components 2000] [--repeat 2]

Data: a synthetic regression problem, x uniform in [−1, 1]^8, y = sin(3x₁)cos(2x₂) + x₃² + x₄x₅
+ 0.1·noise, RBF kernel γ = 0.5, λ = 1e-3; RMSE on 5,000 held-out rows. Every (part, size,
system) runs in its own process, so its peak memory (ru_maxrss) is its own. From N = 16,384 (a 2 GB
kernel) both systems factorise on one BLAS thread: the threaded OpenBLAS potrf of the numpy and scipy
wheels segfaults there. Each measurement is the fastest of `--repeat` rounds in alternating order.
Prints one table per part with time, RMSE and peak memory, and the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import resource
import time

import numpy as np

from _results import write
from workers import best_of_rounds, print_runs, run_worker  # beside this script, whose folder is on sys.path

GAMMA, ALPHA, FEATURES = 0.5, 1e-3, 8
GRID_ALPHAS = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
GRID_GAMMAS = [0.05, 0.1, 0.5, 1.0, 2.0]
TEST_ROWS = 5000


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n + TEST_ROWS, FEATURES))
    y = np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + X[:, 2] ** 2 + X[:, 3] * X[:, 4] + 0.1 * rng.normal(size=len(X))
    return X[:n], y[:n], X[n:], y[n:]


def _rmse(model, Xt, yt):
    return float(np.sqrt(np.mean((model.predict(Xt) - yt) ** 2)))


def run(part, n, system, components):
    X, y, Xt, yt = data(n)
    import svmkit
    try:
        from svmkit.solvers.dense.packed import PACKED_MIN_N
    except ImportError:  # a tree before the solvers' family folders, timed by before_after.py
        from svmkit.solvers.packed import PACKED_MIN_N
    from sklearn.kernel_ridge import KernelRidge as SKKernelRidge
    from sklearn.model_selection import GridSearchCV
    from threadpoolctl import threadpool_limits

    # compiled loops loaded before the clock: the leave-one-out diagonal's on a small fit; for
    # single fits the packed factor's on one of PACKED_MIN_N rows (smaller fits factor the whole
    # kernel by LAPACK), not before the search, whose peak memory it would set
    svmkit.KernelRidge(kernel="rbf", gamma=GAMMA, loo=True).fit(X[:50], y[:50])
    if part == "single":
        Xw, yw, _, _ = data(PACKED_MIN_N, seed=1)
        svmkit.KernelRidge(kernel="rbf", gamma=GAMMA).fit(Xw, yw)
    t0 = time.perf_counter()
    extra = {}
    if part == "single" and system == "svmkit":
        model = svmkit.KernelRidge(kernel="rbf", alpha=ALPHA, gamma=GAMMA, solver="cholesky").fit(X, y)
    elif part == "single":
        # as svmkit does past 2 GB: the wheels' threaded OpenBLAS potrf segfaults there
        with threadpool_limits(limits=1) if 8 * n * n >= 1 << 31 else contextlib.nullcontext():
            model = SKKernelRidge(alpha=ALPHA, kernel="rbf", gamma=GAMMA).fit(X, y)
    elif part == "search" and system == "svmkit":
        from svmkit.model_selection import KernelRidgeCV
        model = KernelRidgeCV(alphas=GRID_ALPHAS, gammas=GRID_GAMMAS).fit(X, y)
        extra["best"] = model.best_params_
    elif part == "search":
        model = GridSearchCV(SKKernelRidge(kernel="rbf"), {"alpha": GRID_ALPHAS, "gamma": GRID_GAMMAS}, cv=5,
                             n_jobs=2).fit(X, y)
        extra["best"] = model.best_params_
    else:
        model = svmkit.KernelRidge(kernel="rbf", alpha=ALPHA, gamma=GAMMA, solver="nystrom", n_components=components,
                                   random_state=0).fit(X, y)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "rmse": _rmse(model, Xt, yt), "peak_mb": peak, **extra}


def in_process(part, n, system, components):
    return run_worker(__file__, (part, n, system, components), timeout=1800)[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parts", default="single,search,nystrom")
    parser.add_argument("--sizes", default="5000,10000,20000")
    parser.add_argument("--search-size", type=int, default=2000)
    parser.add_argument("--nystrom-sizes", default="200000,1000000")
    parser.add_argument("--components", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=2,
                        help="rounds per measurement, in alternating order; the fastest is printed")
    parser.add_argument("--worker", nargs=4)
    args = parser.parse_args()
    if args.worker:
        part, n, system, m = args.worker
        print(json.dumps(run(part, int(n), system, int(m))))
        return
    print(f"# machine: {platform.machine()}, Python {platform.python_version()}; features {FEATURES}, "
          f"RBF γ={GAMMA}, λ={ALPHA}, RMSE on {TEST_ROWS} held-out rows")
    parts = args.parts.split(",")
    print("| part | N | system | seconds | RMSE | peak MB | scikit-learn s / this |")
    print("|---|---|---|---|---|---|---|")
    plan = []
    if "single" in parts:
        plan += [("single", int(n), ("svmkit", "scikit-learn")) for n in args.sizes.split(",")]
    if "search" in parts:
        plan.append(("search", args.search_size, ("svmkit", "scikit-learn")))
    if "nystrom" in parts:
        plan += [("nystrom", int(n), ("svmkit",)) for n in args.nystrom_sizes.split(",")]
    table = []
    for part, n, systems in plan:
        results = best_of_rounds(lambda s: in_process(part, n, s, args.components), systems, args.repeat)
        ref = results.get("scikit-learn", {}).get("seconds")
        for system, r in results.items():
            if "error" in r:
                print(f"| {part} | {n} | {system} | failed: {r['error']} | | | |")
                table.append({"part": part, "N": n, "system": system, "error": r["error"]})
                continue
            label = system + (f" (M={args.components})" if part == "nystrom" else "")
            ratio = f"{ref / r['seconds']:.1f}x" if ref else "–"
            best = f" best {r['best']}" if "best" in r else ""
            print(f"| {part} | {n} | {label}{best} | {r['seconds']:.2f} | {r['rmse']:.4f} | {r['peak_mb']:.0f} | {ratio} |",
                  flush=True)
            table.append({"part": part, "N": n, "system": label, **{k: v for k, v in r.items() if k != "runs"},
                          "speedup": ref / r["seconds"] if ref else None})
        print_runs(results)
    write("bench_ridge", table, notes=f"Kernel ridge, RBF γ={GAMMA}, λ={ALPHA}; RMSE on {TEST_ROWS} held-out rows; "
          "`speedup` is scikit-learn's seconds over this system's.",
          plots=[{"kind": "lines", "x": "N", "y": "seconds", "series": "system", "where": {"part": "single"},
                  "title": "one fit: seconds against N", "ylabel": "fit seconds"},
                 {"kind": "bars", "value": "speedup", "label": ["part", "N", "system"], "reference": 1,
                  "xlabel": "scikit-learn s / this system's"}])


if __name__ == "__main__":
    main()
