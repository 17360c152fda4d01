"""Time svmkit's SVC on the GPU (`device='cuda'`) beside svmkit on the CPU and scikit-learn, and
the physical floor: one full n × n Gram matrix by float32 GEMM on the same GPU.

    python benchmarks/bench_gpu.py [--sets binary,mnist10,a9a,w8a,covtype-like] [--systems ...]

Sets: 'binary' (make_classification, 60,000 × 784, RBF γ = 1/784, C = 10), 'mnist10' (10
classes, 60,000 × 784, same kernel), a9a and w8a (RBF as in bench_proba.py) and
'covtype-like' (500,000 × 54 synthetic; CPU systems skipped there unless asked for). Each
(set, system) runs in its own process: fit and predict seconds on 10,000 held-out rows,
accuracy, #SV. Needs a CUDA device and CuPy (the `gpu` extra); without them it says so and
stops.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from _results import write
from workers import print_rows, run_worker  # beside this script, whose folder is on sys.path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SYSTEMS = ("svmkit cuda", "svmkit cpu", "scikit-learn")
#: Sets on which the CPU systems run only when named in --systems explicitly.
GPU_ONLY = {"covtype-like"}


def load(name):
    from sklearn.datasets import load_svmlight_file, make_classification

    if name in ("a9a", "w8a"):
        features = {"a9a": 123, "w8a": 300}[name]
        X, y = load_svmlight_file(str(DATA / name), n_features=features)
        order = np.random.default_rng(0).permutation(X.shape[0])
        X, y = X[order].toarray(), y[order]
        return X[:-10000], y[:-10000], X[-10000:], y[-10000:], {"C": 8.0 if name == "w8a" else 1.0,
                                                                 "gamma": 0.03 if name == "w8a" else 0.05}
    shape = {"binary": (70_000, 784, 2), "mnist10": (70_000, 784, 10), "covtype-like": (510_000, 54, 2)}[name]
    X, y = make_classification(shape[0], shape[1], n_informative=min(50, shape[1] // 2), n_classes=shape[2],
                               n_clusters_per_class=2, random_state=0)
    X = (X / np.abs(X).max(axis=0)).astype(np.float64)
    return X[:-10000], y[:-10000], X[-10000:], y[-10000:], {"C": 10.0, "gamma": 1.0 / shape[1]}


def gram_floor(n, d):
    """Seconds of one n × n float32 Gram matrix by GEMM on the GPU (best of 3), in n/4-row
    blocks so that it fits beside the benchmark."""
    import cupy

    X = cupy.random.standard_normal((n, d), dtype=cupy.float32)
    step = max(1, n // 4)
    out = cupy.empty((step, n), dtype=cupy.float32)
    best = np.inf
    for _ in range(3):
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for s in range(0, n, step):
            cupy.matmul(X[s:s + step], X.T, out=out[: min(step, n - s)])
        cupy.cuda.Device().synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def run(name, system):
    X, y, Xt, yt, params = load(name)
    if system == "scikit-learn":
        from sklearn.svm import SVC

        model = SVC(kernel="rbf", cache_size=4096, **params)
    else:
        import svmkit
        from svmkit.solvers.smo import FULL_BLOCK

        model = svmkit.SVC(kernel="rbf", cache_size=4096, device=system.split()[1], **params)
        if model.device == "cuda":  # every variant of the solver's CUDA kernels, as after a first use
            from svmkit.solvers._smo_cuda import compile_kernels

            compile_kernels()
        # compiled loops, CUDA context; on the GPU past one block, so that CuPy's first-use
        # compilations of the outer loop's kernels (kept on disk afterwards) fall outside the timing
        warm = 500 if model.device == "cpu" else min(X.shape[0], FULL_BLOCK + 1000)
        svmkit.SVC(device=model.device).fit(X[:warm], y[:warm]).predict(X[:10])
    t0 = time.perf_counter()
    model.fit(X, y)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    predicted = model.predict(Xt)
    predict = time.perf_counter() - t0
    return {"fit": fit, "predict": predict, "accuracy": float(np.mean(predicted == yt)),
            "n_sv": int(model.n_support_.sum())}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="binary,mnist10,a9a,w8a,covtype-like")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--worker", nargs=2)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run(*args.worker)))
        return
    from svmkit.backend import DeviceUnavailableError, cupy_module

    try:
        cupy_module()
    except DeviceUnavailableError as err:
        raise SystemExit(f"bench_gpu.py needs a CUDA device: {err}") from None
    print(f"# one 60,000 x 60,000 Gram matrix (784 features) by float32 GEMM: {gram_floor(60_000, 784):.3f} s")
    named = args.systems.split(",")
    print("| set | system | fit s | predict s | accuracy | #SV | scikit-learn fit s / this |")
    print("|---|---|---|---|---|---|---|")
    table = []
    for name in args.sets.split(","):
        results = {}
        for system in named:
            if name in GPU_ONLY and system != "svmkit cuda" and args.systems == ",".join(SYSTEMS):
                continue
            results[system], _ = run_worker(__file__, [name, system], timeout=7200)
        table += print_rows(name, results, "fit",
                            lambda r: f"{r['fit']:.2f} | {r['predict']:.2f} | {r['accuracy']:.4f} | {r['n_sv']}", 4)
    write("bench_gpu", table, notes="SVC fits on the GPU and the CPU; `speedup` is scikit-learn's fit seconds over "
          "this system's.", plots=[{"kind": "bars", "value": "speedup", "label": ["set", "system"], "reference": 1,
                                    "xscale": "log", "xlabel": "scikit-learn fit s / this system's"}])


if __name__ == "__main__":
    main()
