"""Check svmkit's GPU fits against its CPU fits on real data: the dual objective of every
one-vs-one problem (relative difference, worst pair), the share of equal test predictions, and
both fit times.

    python benchmarks/check_gpu.py [--sets heart_scale,a9a,w8a,satimage,mnist]

Needs a CUDA device and CuPy (the `gpu` extra); the data sets are read from `workers.data_dir()`
($SVMKIT_DATA, shared/data in the repository, or ../shared/data); a set whose file is missing
is reported and skipped.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _results import write  # beside this script, whose folder is on sys.path
from workers import data_dir

DATA = data_dir()
#: (training file, test file or None for the last 20 % of the rows, features, SVC parameters)
SETS = {"heart_scale": ("heart_scale", None, 13, {"C": 10.0, "gamma": 0.05}),
        "a9a": ("a9a", "a9a.t", 123, {"C": 1.0, "gamma": 0.05}),
        "w8a": ("w8a", None, 300, {"C": 8.0, "gamma": 0.03}),
        "satimage": ("satimage.scale", "satimage.scale.t", 36, {"C": 10.0, "gamma": 1.0}),
        "mnist": ("mnist.scale.t.bz2", None, 780, {"C": 10.0, "gamma": 0.01})}


def load(name):
    from sklearn.datasets import load_svmlight_file

    train, test, features, params = SETS[name]
    X, y = load_svmlight_file(str(DATA / train), n_features=features)
    if test is not None:
        Xt, yt = load_svmlight_file(str(DATA / test), n_features=features)
        return X, y, Xt, yt, params
    cut = X.shape[0] - X.shape[0] // 5
    return X[:cut], y[:cut], X[cut:], y[cut:], params


def main():
    import svmkit

    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default=",".join(SETS))
    args = parser.parse_args()
    svmkit.SVC(options=svmkit.Options(device="cuda")).fit(np.eye(4), [0, 0, 1, 1])  # CUDA context and kernels compiled
    print("| set | rows | classes | CPU fit s | GPU fit s | worst objective rel. diff | equal predictions | #SV CPU / GPU |")
    print("|---|---|---|---|---|---|---|---|")
    table = []
    for name in args.sets.split(","):
        if not (DATA / SETS[name][0]).exists():
            print(f"| {name} | missing: {DATA / SETS[name][0]} |", flush=True)
            continue
        X, y, Xt, yt, params = load(name)
        fits = {}
        for device in ("cpu", "cuda"):
            model = svmkit.SVC(kernel="rbf", cache_size=2048, options=svmkit.Options(device=device), **params)
            t0 = time.perf_counter()
            model.fit(X, y)
            fits[device] = (model, time.perf_counter() - t0)
        (cpu, t_cpu), (gpu, t_gpu) = fits["cpu"], fits["cuda"]
        rel = np.max(np.abs(gpu.objective_ - cpu.objective_) / np.abs(cpu.objective_))
        same = np.mean(gpu.predict(Xt) == cpu.predict(Xt))
        print(f"| {name} | {X.shape[0]} | {cpu.classes_.size} | {t_cpu:.2f} | {t_gpu:.2f} | {rel:.2e} | "
              f"{same:.4f} | {cpu.n_support_.sum()} / {gpu.n_support_.sum()} |", flush=True)
        table.append({"set": name, "rows": X.shape[0], "classes": cpu.classes_.size, "CPU fit s": t_cpu,
                      "GPU fit s": t_gpu, "CPU/GPU": t_cpu / t_gpu, "objective rel. diff": rel,
                      "equal predictions": same, "#SV CPU": int(cpu.n_support_.sum()),
                      "#SV GPU": int(gpu.n_support_.sum())})
    write("check_gpu", table, notes="SVC on the CPU and the GPU: the worst relative difference of the dual "
          "objectives and the share of equal predictions.",
          plots=[{"kind": "bars", "value": "CPU/GPU", "label": ["set"], "reference": 1,
                  "xlabel": "CPU fit s / GPU fit s"}])


if __name__ == "__main__":
    main()
