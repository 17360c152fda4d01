"""Time the linear SVMs: svmkit's LinearSVC / LinearSVR beside scikit-learn's and liblinear's
(liblinear-official), every LIBLINEAR solver that the two models offer, all with the same
options and stopping tolerance.

    python benchmarks/bench_linear.py [--sets a9a,w8a,synthetic,synthetic-svr,satimage,dna]
                                      [--variants ...] [--tol 0.01] [--C 1] [--repeat 2]

Variants (liblinear's -s): squared_hinge (1, dual), hinge (3), squared_hinge-primal (2,
dual=False), l1 (5, penalty='l1'), crammer_singer (4), epsilon_insensitive (13),
squared_epsilon_insensitive-primal (11, dual=False). Sets: a9a (scored on a9a.t), w8a (shuffled
with seed 0, the last 10,000 rows held out), a 200,000 × 100 synthetic classification set
(make_classification, 20 informative features, seed 0; 20 % held out), a 200,000 × 100
synthetic regression set (make_regression, noise 10, seed 0), and for Crammer–Singer the
multi-class satimage (6 classes) and dna (3 classes), each scored on its .t file. Every system
gets the same C, tol, at most 300 passes for the dual solvers (liblinear-official's fixed
limit; its others have their own: 1000 Newton steps or L1 passes, 100,000 Crammer–Singer
passes) and an intercept as
a penalised constant feature of 1 (liblinear -B 1). liblinear's data conversion to its own row
format is done before its clock starts; svmkit's and scikit-learn's fit() include their input
checks. scikit-learn's primal Newton is an older trust-region one (TRON), liblinear-official's
and svmkit's a line-search one. Each (set, variant, system) runs in its own process, in
`--repeat` rounds in alternating order, the fastest printed (every round on a comment line).
Prints fit seconds, the objective each reached, held-out accuracy (R² for regression), and
scikit-learn's and liblinear's time over each system's.
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
from _results import write
from workers import best_of_rounds, print_runs, run_worker

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SYSTEMS = ("svmkit", "scikit-learn", "liblinear")
#: Passes allowed to every system: liblinear-official 2.50 stops its dual solvers at 300.
MAX_PASSES = 300
#: Passes of liblinear-official's Crammer–Singer solver (fixed; scikit-learn's too).
CS_PASSES = 100_000
#: variant → (liblinear -s, model options).
VARIANTS = {
    "squared_hinge": (1, {"loss": "squared_hinge", "dual": True}),
    "hinge": (3, {"loss": "hinge", "dual": True}),
    "squared_hinge-primal": (2, {"loss": "squared_hinge", "dual": False}),
    "l1": (5, {"penalty": "l1", "loss": "squared_hinge", "dual": False}),
    "crammer_singer": (4, {"multi_class": "crammer_singer"}),
    "epsilon_insensitive": (13, {"loss": "epsilon_insensitive", "dual": True}),
    "squared_epsilon_insensitive-primal": (11, {"loss": "squared_epsilon_insensitive", "dual": False}),
}
REGRESSION = ("epsilon_insensitive", "squared_epsilon_insensitive-primal")
#: The variants timed on each set unless --variants says otherwise.
DEFAULT_VARIANTS = {"synthetic-svr": REGRESSION, "satimage": ("crammer_singer",), "dna": ("crammer_singer",),
                    None: ("squared_hinge", "hinge", "squared_hinge-primal", "l1")}


def load(name):
    from sklearn.datasets import load_svmlight_file, make_classification, make_regression

    if name == "a9a":
        X, y = load_svmlight_file(str(DATA / "a9a"), n_features=123)
        Xt, yt = load_svmlight_file(str(DATA / "a9a.t"), n_features=123)
        return X, y, Xt, yt
    if name in ("satimage", "dna"):
        X, y = load_svmlight_file(str(DATA / f"{name}.scale"))
        Xt, yt = load_svmlight_file(str(DATA / f"{name}.scale.t"), n_features=X.shape[1])
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


def objective(X, y, W, b, C, variant):
    """The problem's objective at weights W (a column per class) and intercepts b: ½‖(w, b)‖²
    or ‖(w, b)‖₁ plus C times the summed loss (Crammer–Singer: its multi-class hinge)."""
    F = np.asarray(X @ W) + b
    if variant == "crammer_singer":
        rows, y_enc = np.arange(y.size), np.searchsorted(np.unique(y), y)
        margins = F - F[rows, y_enc][:, None] + 1
        margins[rows, y_enc] = 0
        return float(0.5 * ((W * W).sum() + (b * b).sum()) + C * margins.max(axis=1).sum())
    f = F[:, 0]
    if variant in REGRESSION:
        r = np.maximum(np.abs(y - f), 0.0) ** (2 if variant.startswith("squared") else 1)
    else:
        r = np.maximum(1 - y * f, 0.0) ** (1 if variant == "hinge" else 2)
    if variant == "l1":
        return float(np.abs(W).sum() + np.abs(b).sum() + C * r.sum())
    return float(0.5 * ((W * W).sum() + (b * b).sum()) + C * r.sum())


def run(name, variant, system, C, tol):
    X, y, Xt, yt = load(name)
    solver, options = VARIANTS[variant]
    regression = variant in REGRESSION
    if system == "liblinear":
        from liblinear.liblinearutil import parameter, problem, train

        prob = problem(y, sp.csr_matrix(X))
        t0 = time.perf_counter()
        epsilon = " -p 0" if regression else ""  # liblinear's default ε is 0.1; the others' 0
        # not -q: liblinear prints its pass count ("#iter = N"), which main() reads
        model = train(prob, parameter(f"-s {solver} -c {C} -e {tol} -B 1{epsilon}"))
        seconds = time.perf_counter() - t0
        labels = model.get_labels()
        k = len(labels) if solver == 4 or len(labels) > 2 else 1
        Wb = np.array([model.w[i] for i in range((X.shape[1] + 1) * k)]).reshape(X.shape[1] + 1, k)
        if solver == 4 or len(labels) > 2:
            Wb = Wb[:, np.argsort(labels)]
        elif not regression and labels[0] != 1:
            Wb = -Wb
        W, b = Wb[:-1], Wb[-1]
    else:
        import svmkit
        from sklearn.svm import LinearSVC, LinearSVR

        if system == "svmkit":
            cls = svmkit.LinearSVR if regression else svmkit.LinearSVC
            cls(C=C, tol=tol, random_state=0, **options).fit(X[:200], y[:200])  # compiled loops loaded
        else:
            cls = LinearSVR if regression else LinearSVC
        max_iter = MAX_PASSES if options.get("dual") else CS_PASSES if variant == "crammer_singer" else 1000
        model = cls(C=C, tol=tol, max_iter=max_iter, random_state=0, **options)
        if system == "scikit-learn" and sp.issparse(X):
            X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            model.fit(X, y)
            seconds = time.perf_counter() - t0
        W = np.atleast_2d(model.coef_).T
        b = np.atleast_1d(model.intercept_)
    F = np.asarray(Xt @ W) + b
    if regression:
        score = 1 - np.mean((yt - F[:, 0]) ** 2) / np.var(yt)
    elif F.shape[1] == 1:
        score = float(np.mean(np.where(F[:, 0] > 0, 1, -1) == yt))
    else:
        score = float(np.mean(np.unique(y)[np.argmax(F, axis=1)] == yt))
    passes = int(np.max(model.n_iter_)) if system != "liblinear" else None
    return {"seconds": seconds, "objective": objective(X, y, W, b, C, variant), "score": float(score),
            "passes": passes}


def in_process(*args):
    result, stdout = run_worker(__file__, args, timeout=3600)
    # the dual and L1 solvers print "#iter = N", the Newton one a line "iter N …" per step
    counts = re.findall(r"#iter = (\d+)", stdout) + re.findall(r"^iter\s+(\d+)", stdout, flags=re.M)
    if "error" not in result and result["passes"] is None and counts:
        result["passes"] = max(map(int, counts))
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="a9a,w8a,synthetic,synthetic-svr,satimage,dna")
    parser.add_argument("--variants", default=None, help="comma-separated; default: every variant of the set's kind")
    parser.add_argument("--tol", type=float, default=0.01)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=2,
                        help="rounds per measurement, in alternating order; the fastest is printed")
    parser.add_argument("--worker", nargs=5)
    args = parser.parse_args()
    if args.worker:
        name, variant, system, C, tol = args.worker
        print(json.dumps(run(name, variant, system, float(C), float(tol))))
        return
    print(f"# machine: {platform.machine()}, Python {platform.python_version()}; C={args.C}, tol={args.tol}, -B 1")
    print("| set | variant (-s) | system | fit s | passes | objective | held-out accuracy / R² "
          "| scikit-learn s / this | liblinear s / this |")
    print("|---|---|---|---|---|---|---|---|---|")
    table = []
    for name in args.sets.split(","):
        kinds = DEFAULT_VARIANTS.get(name, DEFAULT_VARIANTS[None])
        variants = [v for v in args.variants.split(",") if v in kinds] if args.variants else kinds
        for variant in variants:
            results = best_of_rounds(lambda s: in_process(name, variant, s, args.C, args.tol), SYSTEMS, args.repeat)
            for system, r in results.items():
                label = f"| {name} | {variant} ({VARIANTS[variant][0]}) | {system} |"
                if "error" in r:
                    print(f"{label} error: {r['error']} |" + " |" * 7, flush=True)
                    table.append({"set": name, "variant": variant, "system": system, "error": r["error"]})
                    continue
                ratios = " | ".join(f"{results[ref]['seconds'] / r['seconds']:.2f}" if "seconds" in results[ref]
                                    else "" for ref in ("scikit-learn", "liblinear"))
                print(f"{label} {r['seconds']:.3f} | {r['passes']} | {r['objective']:.6g} | {r['score']:.4f} | "
                      f"{ratios} |", flush=True)
                table.append({"set": name, "variant": f"{variant} ({VARIANTS[variant][0]})", "system": system,
                              **{k: v for k, v in r.items() if k != "runs"},
                              **{f"{ref}/this": results[ref]["seconds"] / r["seconds"] if "seconds" in results[ref]
                                 else None for ref in ("scikit-learn", "liblinear")}})
            print_runs(results, digits=3)
    write("bench_linear", table, notes=f"LIBLINEAR's solvers, C={args.C}, tol={args.tol}, -B 1; `liblinear/this` is "
          "liblinear-official's fit seconds over this system's.",
          plots=[{"kind": "bars", "value": "liblinear/this", "label": ["set", "variant", "system"], "reference": 1,
                  "xscale": "log", "xlabel": "liblinear s / this system's"}])


if __name__ == "__main__":
    main()
