"""Default threads against one thread, with a core busy elsewhere: fit and predict of SVC,
KernelRidge and KernelLogisticRegression at 700 and 10,000 rows.

    python benchmarks/bench_threads.py [--sizes 700,10000] [--models SVC,KernelRidge,KernelLogisticRegression]
                                       [--repeats 3] [--no-busy]

A spinning process holds one core for the whole run (unless --no-busy). Each (model, size,
threads) runs in its own process: 'default' as svmkit starts, 'one' with OpenBLAS and OpenMP
(the compiled core's loops) limited to one thread from the start (OPENBLAS_NUM_THREADS=1
OMP_NUM_THREADS=1). Prints the best of `--repeats` timings of each and the ratio
default / one: above 1 means the default threads lose to one thread beside the busy core.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _results import write

CASE = r"""
import json, sys, time, warnings
import numpy as np
import svmkit
from sklearn.datasets import make_classification
warnings.simplefilter("ignore")
name, n, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
X, y = make_classification(n_samples=n + 2000, n_features=50, n_informative=20, random_state=0)
X = X / np.sqrt(X.shape[1])
Xt, X, y = X[n:], X[:n], y[:n]
target = y if name != "KernelRidge" else X @ np.linspace(-1, 1, X.shape[1])
make = {"SVC": lambda: svmkit.SVC(C=10.0, gamma=1.0),
        "KernelRidge": lambda: svmkit.KernelRidge(kernel="rbf", alpha=1e-2, gamma=1.0),
        "KernelLogisticRegression": lambda: svmkit.KernelLogisticRegression(C=10.0, gamma=1.0)}[name]
make().fit(X[:200], target[:200]).predict(Xt[:10])  # compiled code loaded before the clock
fits, predicts = [], []
for _ in range(repeats):
    t0 = time.perf_counter(); model = make().fit(X, target); fits.append(time.perf_counter() - t0)
    t0 = time.perf_counter(); model.predict(Xt); predicts.append(time.perf_counter() - t0)
print(json.dumps({"fit": min(fits), "predict": min(predicts)}))
"""

ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def timed(name, n, repeats, env):
    done = subprocess.run([sys.executable, "-c", CASE, name, str(n), str(repeats)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=3600)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="700,10000")
    parser.add_argument("--models", default="SVC,KernelRidge,KernelLogisticRegression")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-busy", action="store_true", help="no spinning process beside the runs")
    args = parser.parse_args()
    busy = None if args.no_busy else subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        print(f"# {os.cpu_count()} cores; {'no core' if busy is None else 'one core'} busy elsewhere; "
              f"best of {args.repeats}; load average {os.getloadavg()[0]:.1f}")
        print(f"{'model':26s} {'n':>6s} {'part':8s} {'default s':>10s} {'one s':>10s} {'ratio':>6s}")
        table = []
        for name in args.models.split(","):
            for n in map(int, args.sizes.split(",")):
                default, one = timed(name, n, args.repeats, {}), timed(name, n, args.repeats, ONE_THREAD)
                for part in ("fit", "predict"):
                    print(f"{name:26s} {n:6d} {part:8s} {default[part]:10.3f} {one[part]:10.3f} "
                          f"{default[part] / one[part]:6.2f}", flush=True)
                    table.append({"model": name, "n": n, "part": part, "default s": default[part],
                                  "one thread s": one[part], "default/one": default[part] / one[part]})
        write("bench_threads", table, notes=f"{'No core' if busy is None else 'One core'} busy elsewhere; best of "
              f"{args.repeats}; `default/one` above 1: the default threads are slower than one thread.",
              plots=[{"kind": "bars", "value": "default/one", "label": ["model", "n", "part"], "reference": 1,
                      "xlabel": "default threads s / one thread s"}])
    finally:
        if busy is not None:
            busy.kill()


if __name__ == "__main__":
    main()
