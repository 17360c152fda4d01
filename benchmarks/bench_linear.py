"""Time the linear SVMs: svmkit's LinearSVC / LinearSVR beside scikit-learn's and liblinear's
(liblinear-official), all solving the same dual with the same stopping tolerance.

    python benchmarks/bench_linear.py [--sets a9a,w8a,synthetic,synthetic-svr] [--tol 0.01] [--C 1] [--repeat 2]

Sets: a9a (scored on a9a.t), w8a (shuffled with seed 0, the last 10,000 rows held out), a
200,000 × 100 synthetic classification set (make_classification, 20 informative features,
seed 0; 20 % held out) for LinearSVC with both losses, and a 200,000 × 100 synthetic
regression set (make_regression, noise 10, seed 0) for LinearSVR. Every system gets the same C,
tol, at most 300 passes (liblinear-official's fixed limit) and an intercept as a regularised
constant feature of 1 (liblinear -B 1). liblinear's data conversion to its own row format is
done before its clock starts; svmkit's and scikit-learn's fit() include their input checks.
Each (set, loss, system) runs in its own process, in `--repeat` rounds in alternating order,
the fastest printed (every round on a comment line). Prints fit seconds, the primal objective
(9.40) each reached, held-out accuracy (R² for regression), and liblinear's time over each
system's.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

# beside this script, whose folder is on sys.path
from workers import best_of_rounds, print_rows, print_runs, run_worker

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SYSTEMS = ("svmkit", "scikit-learn", "liblinear")
#: Passes allowed to every system: liblinear-official 2.47 stops its dual solvers at 300.
MAX_PASSES = 300
LIBLINEAR_SOLVER = {"hinge": 3, "squared_hinge": 1, "epsilon_insensitive": 13}


def load(name):
    from sklearn.datasets import load_svmlight_file, make_classification, make_regression

    if name == "a9a":
        X, y = load_svmlight_file(str(DATA / "a9a"), n_features=123)
        Xt, yt = load_svmlight_file(str(DATA / "a9a.t"), n_features=123)
        return X, y, Xt, yt
    if name == "w8a":
        X, y = load_svmlight_file(str(DATA / "w8a"), n_features=300)
        order = np.random.default_rng(0).permutation(X.shape[0])
        X, y = X[order], y[order]
        return X[:-10000], y[:-10000], X[-10000:], y[-10000:]
    if name == "synthetic":
        X, y = make_classification(250_000, 100, n_informative=20, random_state=0)
        y = 2.0 * y - 1
    else:
        X, y = make_regression(250_000, 100, n_informative=20, noise=10.0, random_state=0)
    return X[:200_000], y[:200_000], X[200_000:], y[200_000:]


def primal(X, y, w, b, C, loss):
    f = np.asarray(X @ w).ravel() + b
    if loss == "epsilon_insensitive":
        r = np.maximum(np.abs(y - f), 0.0)
    else:
        r = np.maximum(1 - y * f, 0.0) ** (2 if loss == "squared_hinge" else 1)
    return float(0.5 * (w @ w + b * b) + C * r.sum())


def run(name, loss, system, C, tol):
    X, y, Xt, yt = load(name)
    regression = loss == "epsilon_insensitive"
    if system == "liblinear":
        from liblinear.liblinearutil import parameter, problem, train

        prob = problem(y, sp.csr_matrix(X))
        t0 = time.perf_counter()
        epsilon = " -p 0" if regression else ""  # liblinear's default ε is 0.1; the others' 0
        # not -q: liblinear prints its pass count ("#iter = N"), which main() reads
        model = train(prob, parameter(f"-s {LIBLINEAR_SOLVER[loss]} -c {C} -e {tol} -B 1{epsilon}"))
        seconds = time.perf_counter() - t0
        w, b = model.get_decfun(0)
        w = np.asarray(w)
        if not regression and model.get_labels()[0] != 1:
            w, b = -w, -b
    else:
        import svmkit
        from sklearn.svm import LinearSVC, LinearSVR

        if system == "svmkit":
            cls = svmkit.LinearSVR if regression else svmkit.LinearSVC
            cls(C=C, tol=tol, random_state=0).fit(X[:200], y[:200])  # compiled loops loaded
        else:
            cls = LinearSVR if regression else LinearSVC
        model = cls(C=C, loss=loss, tol=tol, max_iter=MAX_PASSES, random_state=0, dual=True)
        if system == "scikit-learn" and sp.issparse(X):
            X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            model.fit(X, y)
            seconds = time.perf_counter() - t0
        w, b = np.ravel(model.coef_), float(np.ravel(model.intercept_)[0])
    f = np.asarray(Xt @ w).ravel() + b
    score = 1 - np.mean((yt - f) ** 2) / np.var(yt) if regression else float(np.mean(np.where(f > 0, 1, -1) == yt))
    passes = int(np.max(model.n_iter_)) if system != "liblinear" else None
    return {"seconds": seconds, "objective": primal(X, y, w, b, C, loss), "score": float(score), "passes": passes}


def in_process(*args):
    result, stdout = run_worker(__file__, args, timeout=3600)
    counts = re.findall(r"#iter = (\d+)", stdout)
    if "error" not in result and result["passes"] is None and counts:
        result["passes"] = int(counts[-1])
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="a9a,w8a,synthetic,synthetic-svr")
    parser.add_argument("--tol", type=float, default=0.01)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=2,
                        help="rounds per measurement, in alternating order; the fastest is printed")
    parser.add_argument("--worker", nargs=5)
    args = parser.parse_args()
    if args.worker:
        name, loss, system, C, tol = args.worker
        print(json.dumps(run(name, loss, system, float(C), float(tol))))
        return
    print(f"# machine: {platform.machine()}, Python {platform.python_version()}; C={args.C}, tol={args.tol}, -B 1")
    print("| set | loss | system | fit s | passes | primal objective | held-out accuracy / R² | liblinear s / this |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        losses = ["epsilon_insensitive"] if name == "synthetic-svr" else ["squared_hinge", "hinge"]
        for loss in losses:
            results = best_of_rounds(lambda s: in_process(name, loss, s, args.C, args.tol), SYSTEMS, args.repeat)
            print_rows(f"{name} | {loss}", results, "seconds",
                       lambda r: f"{r['seconds']:.3f} | {r['passes']} | {r['objective']:.6g} | {r['score']:.4f}", 4,
                       reference="liblinear", digits=2)
            print_runs(results, digits=3)


if __name__ == "__main__":
    main()
