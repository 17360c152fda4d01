"""Time svmkit's SVC on the GPU (`Options(device='cuda')`) beside svmkit on the CPU and scikit-learn, and
the physical floor: one full n × n Gram matrix by float32 GEMM on the same GPU.

    python benchmarks/bench_gpu.py [--sets binary,mnist10,a9a,w8a,covtype-like,ridge20k,capped,precomputed,noisy1m]
                                   [--systems ...] [--timeout SECONDS] [--no-floor]

Systems: 'svmkit cuda', with settings after it: 'every=N' (Newton steps in the device's block
between chunks of N pair updates), 'threads=N' (blocks of N threads), 'streams=N' (class pairs
solved N at a time; 1: in turn), 'profile=1' (the seconds of the solver's parts, `profiled`),
e.g. 'svmkit cuda streams=1 profile=1'; 'svmkit cpu', 'scikit-learn', and 'cuml' (cuML's SVC on the
same card, where `cuml` is installed; its pair updates are not exposed and print as -1).
Sets: 'binary' (make_classification, 60,000 × 784, RBF γ = 1/784, C = 10), 'mnist10' (10
classes, 60,000 × 784, same kernel), a9a and w8a (RBF as in bench_proba.py; read from
`workers.data_dir()`, skipped when missing) and 'covtype-like' (500,000 × 54 synthetic; CPU
systems skipped there unless asked for). Each (set, system) runs in its own process, stopped
after --timeout seconds: fit and predict seconds on 10,000 held-out rows, accuracy, #SV, pair updates.
Three sets print lines of their own: 'ridge20k' (KernelRidge, RBF, 20,000 × 20, fitted on the
GPU and on the CPU in one process: both times and the largest difference of β and of the
predictions, relative to the largest) and 'capped' (SVC on `capped_data`'s 30,000 × 6,000, 0.72 GB
in float32, fitted on the GPU as it is, then with CuPy's memory pool limited to 512 MiB, less than the data:
both fit times, the objectives' relative difference, and both models' predictions on 2,000
rows, the capped one's centres going to the device a block at a time), and 'precomputed' (SVC
on the 'binary' set's first 20,000 rows on the GPU, the RBF kernel given as its 20,000 × 20,000
matrix, computed on the device and fetched to the host first, against the same fit from the
data: both fit times, the placed matrix's size, the objectives' relative difference, and the
prediction of 5,000 rows from their test kernel), and 'noisy1m' (SVC, C = 1, γ = 'scale', on
`bench_cluster.py`'s noisy 1M × 50 set in memory: fit seconds, objective, #SV).
Needs a CUDA device and CuPy (the `gpu` extra); without them it says so and stops.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import time

import numpy as np

from _results import write  # beside this script, whose folder is on sys.path
from workers import data_dir, print_rows, run_worker

DATA = data_dir()
SYSTEMS = ("svmkit cuda", "svmkit cpu", "scikit-learn")
#: Sets on which the CPU systems run only when named in --systems explicitly.
GPU_ONLY = {"covtype-like"}
#: Training rows of the 'precomputed' set (its float32 matrix on the device: 1.6 GB).
PRECOMPUTED_ROWS = 20_000
#: CuPy's pool limit of the 'capped' set (512 MiB), and its data's shape (float32: 0.72 GB).
CAP_BYTES = 2**29
CAPPED_SHAPE = (30_000, 6_000)


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
    spent = None
    if system == "scikit-learn":
        from sklearn.svm import SVC

        model = SVC(kernel="rbf", cache_size=4096, **params)
    elif system == "cuml":
        from cuml.svm import SVC

        model = SVC(kernel="rbf", cache_size=4096, **params)
        SVC(kernel="rbf").fit(X[:500], y[:500]).predict(X[:10])  # CUDA context and kernels, outside the timing
    else:
        import svmkit
        from svmkit.solvers.smo.solver import FULL_BLOCK

        device = system.split()[1]
        model = svmkit.SVC(kernel="rbf", cache_size=4096, options=svmkit.Options(device=device), **params)
        if device == "cuda":
            from svmkit import backend
            from svmkit.solvers.smo import _cuda

            settings = dict(word.split("=") for word in system.split()[2:])
            _cuda.NEWTON_EVERY = int(settings.get("every", _cuda.NEWTON_EVERY))
            _cuda.BLOCK_THREADS = int(settings.get("threads", _cuda.BLOCK_THREADS))
            backend.PROBLEM_STREAMS = int(settings.get("streams", backend.PROBLEM_STREAMS))
            _cuda.compile_kernels()  # every variant of the solver's CUDA kernels, as after a first use
            spent = profiled() if settings.get("profile") == "1" else None
        # compiled loops, CUDA context; on the GPU past one block, so that CuPy's first-use
        # compilations of the outer loop's kernels (kept on disk afterwards) fall outside the timing
        warm = 500 if device == "cpu" else min(X.shape[0], FULL_BLOCK + 1000)
        svmkit.SVC(options=model.options).fit(X[:warm], y[:warm]).predict(X[:10])
    if spent is not None:
        spent.clear()  # the warm-up's
    t0 = time.perf_counter()
    model.fit(X, y)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    predicted = model.predict(Xt)
    predict = time.perf_counter() - t0
    return {"fit": fit, "predict": predict, "accuracy": float(np.mean(np.asarray(predicted) == yt)),
            "n_sv": int(np.sum(model.n_support_)), "n_iter": int(np.sum(getattr(model, "n_iter_", -1))),
            **({"profile": dict(spent)} if spent is not None else {})}


def profiled() -> dict:
    """Time the device solver's parts from here on, the device synchronised around each call:
    its blocks (`_cuda.inner_smo`), gradient updates and kernel rows (`DeviceKernel.rows_into`),
    in seconds, with their calls and the rows computed; what the fit spends besides is the outer
    loop's selection and transfers. Returns the dict it fills."""
    import cupy

    from svmkit.kernels import device
    from svmkit.solvers.smo import _cuda

    spent = {}

    def timed(key, func, rows=False):
        def wrapper(*args):
            cupy.cuda.get_current_stream().synchronize()
            t0 = time.perf_counter()
            out = func(*args)
            cupy.cuda.get_current_stream().synchronize()
            spent[f"{key} s"] = spent.get(f"{key} s", 0.0) + time.perf_counter() - t0
            spent[f"{key} calls"] = spent.get(f"{key} calls", 0) + 1
            if rows:
                spent["rows computed"] = spent.get("rows computed", 0) + len(args[1])
            return out
        return wrapper

    _cuda.inner_smo = timed("block", _cuda.inner_smo)
    _cuda.update_gradient = timed("gradient", _cuda.update_gradient)
    device.DeviceKernel.rows_into = timed("rows", device.DeviceKernel.rows_into, rows=True)
    return spent


def run_ridge20k(n=20_000):
    """KernelRidge (RBF, α = 10⁻³) on n × 20 on the GPU and on the CPU."""
    import svmkit

    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (n, 20))
    y = np.sin(X[:, :5].sum(axis=1)) + 0.1 * rng.standard_normal(X.shape[0])
    params = {"kernel": "rbf", "alpha": 1e-3, "gamma": 0.1}
    # CUDA context, cuSOLVER, and CuPy's reductions at this size (compiled by NVRTC once per
    # machine, then read from CuPy's disk cache: 4.1 s of a first 20k fit on an H200)
    svmkit.KernelRidge(options=svmkit.Options(device="cuda"), **params).fit(X, y).predict(X[:10])
    out, models = {}, {}
    for device in ("cuda", "cpu"):
        t0 = time.perf_counter()
        models[device] = svmkit.KernelRidge(options=svmkit.Options(device=device), **params).fit(X, y)
        out[f"fit {device}"] = time.perf_counter() - t0
    gpu, cpu = models["cuda"], models["cpu"]
    out["beta rel diff"] = float(np.abs(gpu.dual_coef_ - cpu.dual_coef_).max() / np.abs(cpu.dual_coef_).max())
    p_gpu, p_cpu = gpu.predict(X[:5000]), cpu.predict(X[:5000])
    out["predict rel diff"] = float(np.abs(p_gpu - p_cpu).max() / np.abs(p_cpu).max())
    return out


def capped_data(seed=0):
    """The 'capped' set: 30,000 points near a 10-dimensional subspace of R^6000 (X = ZW + 0.3·noise,
    Z and W standard normal, W scaled by 1/√10), labelled by a circle in two of the latent
    coordinates, 2 % of the labels flipped; in float32 values. Distances are set by the latent
    coordinates, as in images or spectra: on 6,000 independent features they would all be
    about equal, and with them every kernel value (e^-2 ± 4 % at γ = 1/6,000)."""
    rng = np.random.default_rng(seed)
    n, d = CAPPED_SHAPE
    Z = rng.standard_normal((n, 10))
    W = rng.standard_normal((10, d)) / np.sqrt(10)
    X = (Z @ W + 0.3 * rng.standard_normal((n, d))).astype(np.float32).astype(np.float64)
    radius = (Z[:, :2] ** 2).sum(axis=1)
    y = (radius > np.median(radius)).astype(int)
    flip = rng.random(n) < 0.02
    y[flip] = 1 - y[flip]
    return X, y


def run_capped():
    """SVC on data larger than CuPy's pool limit: the fit streams it from the host."""
    import cupy

    import svmkit
    from svmkit.solvers.smo._cuda import compile_kernels

    compile_kernels()
    X, y = capped_data()
    params = {"C": 1.0, "gamma": 1.0 / X.shape[1], "cache_size": 4096}
    svmkit.SVC(options=svmkit.Options(device="cuda")).fit(X[:300], y[:300])
    out = {"data GB (float32)": 4 * X.size / 1e9, "cap GB": CAP_BYTES / 1e9}
    pool = cupy.get_default_memory_pool()
    predicted = {}
    for name, limit in (("in memory", 0), ("capped", CAP_BYTES)):
        model = None  # the in-memory fit's device arrays go before the cap is set
        gc.collect()
        pool.free_all_blocks()
        pool.set_limit(size=limit)
        t0 = time.perf_counter()
        model = svmkit.SVC(options=svmkit.Options(device="cuda"), **params).fit(X, y)
        out[f"fit {name}"] = time.perf_counter() - t0
        out[f"objective {name}"] = float(np.sum(model.objective_))
        out[f"#SV {name}"] = int(model.n_support_.sum())
        t0 = time.perf_counter()
        predicted[name] = model.predict(X[:2000])
        out[f"predict 2,000 {name}"] = time.perf_counter() - t0
    out["objective rel diff"] = abs(out["objective capped"] - out["objective in memory"]) / abs(out["objective in memory"])
    out["equal predictions"] = float(np.mean(predicted["capped"] == predicted["in memory"]))
    return out


def run_precomputed(n=PRECOMPUTED_ROWS):
    """SVC on the GPU with the kernel given as a matrix (`kernel='precomputed'`) and from the data."""
    import cupy

    import svmkit
    from svmkit.kernels.device import device_gram, device_rows
    from svmkit.kernels.kinds import make_kernel
    from svmkit.solvers.smo._cuda import compile_kernels

    compile_kernels()
    X, y, Xt, _, params = load("binary")
    X, y, Xt = X[:n], y[:n], Xt[:5000]
    spec = make_kernel("rbf", X, params["gamma"])
    # float64 on the device: the given matrix as the CPU would compute it
    D, sq = device_rows(cupy, spec, np.vstack([X, Xt]), dtype=np.float64)
    K_all = cupy.asnumpy(device_gram(cupy, spec, D, D[:n], sq, sq[:n]))
    K, K_test = K_all[:n], K_all[n:]
    del D, sq, K_all
    gpu = svmkit.Options(device="cuda")
    svmkit.SVC(kernel="precomputed", options=gpu).fit(K[:300, :300], y[:300])
    out = {"matrix GB (float32)": 4 * n * n / 1e9}
    models = {}
    for name, model, data in (("precomputed", svmkit.SVC(kernel="precomputed", C=params["C"], options=gpu), K),
                              ("rbf", svmkit.SVC(kernel="rbf", cache_size=4096, options=gpu, **params), X)):
        t0 = time.perf_counter()
        models[name] = model.fit(data, y)
        out[f"fit {name}"] = time.perf_counter() - t0
        out[f"objective {name}"] = float(np.sum(model.objective_))
    t0 = time.perf_counter()
    predicted = models["precomputed"].predict(K_test)
    out["predict 5,000 precomputed"] = time.perf_counter() - t0
    out["objective rel diff"] = abs(out["objective precomputed"] - out["objective rbf"]) / abs(out["objective rbf"])
    out["equal predictions"] = float(np.mean(predicted == models["rbf"].predict(Xt)))
    return out


def run_noisy1m():
    """SVC on `bench_cluster.py`'s noisy set of 1M × 50 rows (the same blocks, in memory), with
    its in-memory settings but for the cache: the objective and #SV to set beside the cascade's."""
    from bench_cluster import FLIP, ROWS_PER_PART, synthetic_block

    import svmkit
    from svmkit.solvers.smo._cuda import compile_kernels

    compile_kernels()
    n = 1_000_000
    blocks = [synthetic_block(k, ROWS_PER_PART, FLIP["noisy"]) for k in range(n // ROWS_PER_PART)]
    X, y = np.vstack([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])
    gpu = svmkit.Options(device="cuda")
    svmkit.SVC(options=gpu).fit(X[:300], y[:300])
    t0 = time.perf_counter()
    model = svmkit.SVC(C=1.0, gamma="scale", tol=1e-3, cache_size=20_000, options=gpu).fit(X, y)
    return {"fit": time.perf_counter() - t0, "objective": float(np.sum(model.objective_)),
            "#SV": int(model.n_support_.sum()), "iterations": int(np.sum(model.n_iter_))}


#: The sets measured by a function of their own (one process, its own line), and that function.
OWN_RUNS = {"ridge20k": run_ridge20k, "capped": run_capped, "precomputed": run_precomputed,
            "noisy1m": run_noisy1m}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="binary,mnist10,a9a,w8a,covtype-like")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--timeout", type=float, default=7200.0, help="seconds each measuring process may take")
    parser.add_argument("--no-floor", action="store_true", help="skip the Gram matrix floor")
    parser.add_argument("--worker", nargs=2)
    args = parser.parse_args()
    if args.worker:
        name, system = args.worker
        print(json.dumps(OWN_RUNS[name]() if name in OWN_RUNS else run(name, system)))
        return
    from svmkit.backend import DeviceUnavailableError, cupy_module

    try:
        cupy_module()
    except DeviceUnavailableError as err:
        raise SystemExit(f"bench_gpu.py needs a CUDA device: {err}") from None
    if not args.no_floor:
        print(f"# one 60,000 x 60,000 Gram matrix (784 features) by float32 GEMM: {gram_floor(60_000, 784):.3f} s")
    named = args.systems.split(",")
    sets = args.sets.split(",")
    table = []
    for name in (s for s in sets if s in OWN_RUNS):
        result, _ = measured(name, "svmkit cuda", args.timeout)
        print(f"# {name}: " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()),
              flush=True)
        table.append({"set": name, "system": "svmkit cuda", **result})
    sets = [s for s in sets if s not in OWN_RUNS]
    if sets:
        print("| set | system | fit s | predict s | accuracy | #SV | pair updates | scikit-learn fit s / this |")
        print("|---|---|---|---|---|---|---|---|")
    for name in sets:
        if name in ("a9a", "w8a") and not (DATA / name).exists():
            print(f"| {name} | missing: {DATA / name} |", flush=True)
            continue
        results = {}
        for system in named:
            if name in GPU_ONLY and system != "svmkit cuda" and args.systems == ",".join(SYSTEMS):
                continue
            results[system], _ = measured(name, system, args.timeout)
        table += print_rows(name, results, "fit",
                            lambda r: f"{r['fit']:.2f} | {r['predict']:.2f} | {r['accuracy']:.4f} | {r['n_sv']} | {r['n_iter']}",
                            5)
        for system, r in results.items():
            if "profile" in r:
                print(f"# {name}, {system}: " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                                                         for k, v in r["profile"].items()), flush=True)
    write("bench_gpu", table, notes="SVC fits on the GPU and the CPU; `speedup` is scikit-learn's fit seconds over "
          "this system's.", plots=[{"kind": "bars", "value": "speedup", "label": ["set", "system"], "reference": 1,
                                    "xscale": "log", "xlabel": "scikit-learn fit s / this system's"}])


def measured(name, system, timeout):
    """One measuring process's result, or {"error": …} when it failed or ran past `timeout`."""
    try:
        return run_worker(__file__, [name, system], timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"stopped after {timeout:g} s"}, ""


if __name__ == "__main__":
    main()
