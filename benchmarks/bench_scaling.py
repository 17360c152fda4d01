"""How the fit cost grows with n: svmkit beside scikit-learn-intelex on synthetic data of
growing size, RBF kernel, gamma = 'scale' resolved once per n and given to every system as a
number, tol 1e-3.

    OPENBLAS_CORETYPE= OPENBLAS_L2_SIZE= .venv/bin/python benchmarks/bench_scaling.py \\
        [--models svc,svr] [--systems svmkit,sklearn-intelex] [--sizes 25000,50000,...] \\
        [--svmkit-only-sizes 1000000] [--limit 600] [--cache MB] [--json PATH]

Data, made again by every child from n and --seed alone: the first n rows of one shuffled data
set of max(n, 1M) rows, so that every n samples the same problem and the smaller sets nest:
  SVC (C = 1): make_classification(1M, 20, n_informative=10, random_state=seed), scikit-learn's
    defaults otherwise (2 redundant features, 2 clusters per class, class_sep 1, 1 % of the
    labels flipped); features as generated.
  SVR (C = 1, epsilon = 0.1): make_regression(1M, 20, n_informative=10, noise=10,
    random_state=seed); features and target standardised over the n rows.

Each (model, n, system) runs in its own process, one after another. The child makes the data,
warms the system up on a 500-row fit (compiled loops and libraries loaded, untimed), resets its
peak-memory mark, then times the fit alone under an interval timer that kills it at --limit
seconds. A system whose fit is killed at some n is not run at larger n; both are reported as
'> limit'. Sizes in --svmkit-only-sizes are run for svmkit alone. cache_size is each system's
default unless --cache MB is given, which every system then gets.

Prints a line naming the machine and versions, then per model a markdown table (n, system, fit
seconds, the fit's own peak resident memory = VmHWM at the end of the fit − VmRSS before it,
that baseline, cache_size, #SV, and training accuracy % or MSE on the first 10k rows, the same
rows at every n), and per system the least-squares slope of log(fit s) on log(n) over the sizes
it completed, with svmkit's and scikit-learn-intelex's slopes compared over the sizes both
completed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import signal
import subprocess
import sys
import time
from importlib import import_module, metadata
from pathlib import Path

import numpy as np

from _results import write  # beside this script, whose folder is on sys.path

MODULES = {"svmkit": "svmkit", "sklearn-intelex": "sklearnex.svm", "scikit-learn": "sklearn.svm"}
PARAMS = {"svc": ("SVC", {"C": 1.0}), "svr": ("SVR", {"C": 1.0, "epsilon": 0.1})}
POOL, SAMPLE = 1_000_000, 10_000


def make_data(model, n, seed):
    """The first n rows of one data set of max(n, POOL) rows: every n draws on one distribution
    (the generators draw the clusters' shapes and the coefficients after the rows, so a data set
    generated with n rows would be a different problem at every n), and smaller sets nest."""
    from sklearn.datasets import make_classification, make_regression
    if model == "svc":
        X, y = make_classification(max(n, POOL), 20, n_informative=10, random_state=seed)
        return X[:n].copy(), y[:n].copy()
    X, y = make_regression(max(n, POOL), 20, n_informative=10, noise=10.0, random_state=seed)
    X, y = X[:n], y[:n]
    return (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()


def _status(field):
    """A field of /proc/self/status in MB."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


def worker(model, n, system, cache, limit, seed):
    X, y = make_data(model, n, seed)
    gamma = float(1.0 / (X.shape[1] * X.var()))
    cls_name, params = PARAMS[model]
    cls = getattr(import_module(MODULES[system]), cls_name)
    extra = {} if cache is None else {"cache_size": cache}
    cls(kernel="rbf", gamma=gamma, tol=1e-3, **params, **extra).fit(X[:500], y[:500])  # warm-up
    m = cls(kernel="rbf", gamma=gamma, tol=1e-3, **params, **extra)
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS
    base = _status("VmRSS")
    signal.setitimer(signal.ITIMER_REAL, limit)  # SIGALRM's default action ends the process
    t = time.perf_counter()
    m.fit(X, y)
    fit = time.perf_counter() - t
    signal.setitimer(signal.ITIMER_REAL, 0)
    peak = _status("VmHWM")
    pred, truth = np.asarray(m.predict(X[:SAMPLE])), y[:SAMPLE]  # the same rows at every n ≥ SAMPLE
    score = float(np.mean((pred - truth) ** 2)) if model == "svr" else float(100 * np.mean(pred == truth))
    print(json.dumps({"model": model, "n": n, "system": system, "fit": fit, "peak_mb": peak - base,
                      "base_mb": base, "cache_mb": m.cache_size, "n_sv": int(np.size(m.support_)),
                      "score": score, "gamma": gamma,
                      "onedal": None if system != "sklearn-intelex" else hasattr(m, "_onedal_estimator")}))


def run_child(model, n, system, args):
    cmd = [sys.executable, __file__, "--worker", model, str(n), system, "--limit", str(args.limit),
           "--seed", str(args.seed)] + ([] if args.cache is None else ["--cache", str(args.cache)])
    try:  # the fit is stopped at --limit by the child; this only catches a stuck data step or predict
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=2 * args.limit + 900)
    except subprocess.TimeoutExpired:
        return "child timed out"
    if out.returncode == -signal.SIGALRM:
        return f"> {args.limit:g} s"
    if out.returncode != 0:
        return "failed: " + (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
    return json.loads(out.stdout.strip().splitlines()[-1])


def slope(rows, sizes=None):
    pts = [(r["n"], r["fit"]) for r in rows if "fit" in r and (sizes is None or r["n"] in sizes)]
    if len(pts) < 2:
        return None, []
    n, t = np.log(np.array(pts)).T
    return float(np.polyfit(n, t, 1)[0]), [p[0] for p in pts]


def _span(ns):
    return f"n = {min(ns):,}–{max(ns):,}, {len(ns)} sizes"


def machine():
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                   platform.machine())
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    vers = ", ".join(f"{p} {metadata.version(p)}" for p in
                     ("numpy", "scipy", "scikit-learn", "scikit-learn-intelex", "svmkit"))
    git = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                         cwd=Path(__file__).parent).stdout.strip()
    return (f"# machine: {cpu}, {os.cpu_count()} cores, {ram:.0f} GiB; Python {platform.python_version()}, "
            f"{vers} (git {git or '?'})")


def _ints(s):
    return [int(float(v)) for v in s.split(",") if v]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="svc,svr")
    ap.add_argument("--systems", default="svmkit,sklearn-intelex", help=f"of {', '.join(MODULES)}")
    ap.add_argument("--sizes", default="25000,50000,100000,200000,400000")
    ap.add_argument("--svmkit-only-sizes", default="1000000", help="sizes run for svmkit alone")
    ap.add_argument("--limit", type=float, default=600, help="seconds a fit may take; larger n skipped after")
    ap.add_argument("--cache", type=float, help="cache_size in MB for every system (default: each its own)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write every row and slope to this file")
    ap.add_argument("--worker", nargs=3, metavar=("MODEL", "N", "SYSTEM"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker[0], int(args.worker[1]), args.worker[2], args.cache, args.limit, args.seed)
    models, systems = args.models.split(","), args.systems.split(",")
    shared, only = _ints(args.sizes), _ints(args.svmkit_only_sizes)
    head = machine()
    print(head)
    cache = "each system its default" if args.cache is None else f"{args.cache:g} MB for every system"
    print(f"# cache_size: {cache}; fit limit {args.limit:g} s; seed {args.seed}")
    report = {"machine": head, "args": vars(args), "rows": {}, "slopes": {}}
    table = []
    for model in models:
        print(f"\n## {model.upper()}\n\n| n | system | fit s | fit peak MB | base MB | cache MB | #SV | "
              f"{'train MSE' if model == 'svr' else 'train accuracy %'} (10k rows) |\n|" + "---|" * 8)
        rows, over = {s: [] for s in systems}, {}
        for n in sorted(set(shared) | set(only)):
            for s in systems:
                if n not in shared and s != "svmkit":
                    continue
                r = over.get(s) or run_child(model, n, s, args)
                if isinstance(r, str):
                    if r.startswith(">"):
                        over[s] = f"> {args.limit:g} s (not run)"
                    print(f"| {n:,} | {s} | {r} | | | | | |")
                else:
                    note = "" if r["onedal"] in (None, True) else " (scikit-learn fallback)"
                    print(f"| {n:,} | {s}{note} | {r['fit']:.2f} | {r['peak_mb']:.0f} | {r['base_mb']:.0f} | "
                          f"{r['cache_mb']:g} | {r['n_sv']} | {r['score']:.4g} |")
                rows[s].append(r if isinstance(r, dict) else {"n": n, "system": s, "result": r})
                table.append({"model": model, "n": n, "system": s,
                              **({k: v for k, v in r.items() if k not in ("n", "system")} if isinstance(r, dict)
                                 else {"result": r})})
                sys.stdout.flush()
        print()
        fits = {}
        for s in systems:
            fits[s] = slope(rows[s])
            k, ns = fits[s]
            print(f"- slope of log(fit s) on log(n), {s}: "
                  + (f"{k:.2f} ({_span(ns)})" if k is not None else "fewer than 2 sizes"))
        if {"svmkit", "sklearn-intelex"} <= set(systems):
            common = set(fits["svmkit"][1]) & set(fits["sklearn-intelex"][1])
            a, ns = slope(rows["svmkit"], common)
            b, _ = slope(rows["sklearn-intelex"], common)
            print("- svmkit's slope ≤ sklearn-intelex's over the sizes both completed: " +
                  (f"{'yes' if a <= b else 'no'} ({a:.2f} vs {b:.2f}, {_span(ns)})" if a is not None
                   else "not comparable (fewer than 2 common sizes)"))
        report["rows"][model] = rows
        report["slopes"][model] = {s: fits[s][0] for s in systems}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    write("bench_scaling", table, notes="Fit seconds against n per system (log-log); slopes of log(fit s) on log(n): "
          + "; ".join(f"{m} {s} {k:.2f}" for m, ks in report["slopes"].items() for s, k in ks.items()
                      if k is not None) + ".",
          plots=[{"kind": "lines", "x": "n", "y": "fit", "series": "system", "where": {"model": m},
                  "title": f"{m.upper()}: fit seconds against n", "xlabel": "n", "ylabel": "fit seconds"}
                 for m in models])


if __name__ == "__main__":
    main()
