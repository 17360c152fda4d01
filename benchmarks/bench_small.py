"""Time single RBF C-SVC fits over LIBSVM grid.py's (C, gamma) grid on small data sets: svmkit
beside scikit-learn and LIBSVM (libsvm-official), in one process, on the same data.

    python benchmarks/bench_small.py [--sets svmguide1,heart_scale,a9a5k]
        [--systems svmkit,scikit-learn,libsvm] [--log2c -5,7,15] [--log2g 3,-5,-15]
        [--repeat N] [--cache MB] [--json PATH]

The grid is grid.py's: log2 C = -5, -3, ..., 15 and log2 gamma = 3, 1, ..., -15 (110 cells);
--log2c / --log2g restrict it to the listed values. Every cell is one fit per system (the
minimum of --repeat fits): tol 1e-3, shrinking on, each system's default cache unless --cache.
Only the fit is timed: LIBSVM's svm_problem is built once per data set, and svmkit's compiled
loops are loaded by an untimed fit before its clock starts. Data: svmguide1 scaled to [-1, 1]
per feature as svm-scale does (dense), heart_scale (CSR), and the first 5,000 rows of a9a (CSR).

Prints, per data set, one row per cell: fit seconds per system, LIBSVM's and scikit-learn's
time over svmkit's, svmkit's dual objective relative to LIBSVM's (< 0: svmkit's is lower, the
dual being minimised), and #SV per system; then a summary: total fit seconds, the cells with
C >= 1 where LIBSVM takes over 50 ms and svmkit is slower than a peer, and the largest
objective and #SV differences from LIBSVM. The objective
is recomputed the same way for every system from its support vectors and coefficients
c = y_i alpha_i: 1/2 c'Kc - sum |c|, with K the float64 RBF kernel among the support vectors.
A peer that raises in a cell is recorded as failed there and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from importlib.metadata import version

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.metrics.pairwise import rbf_kernel

from _results import write
from bench_svc import DATA, _int32


def _svmguide1():
    from svmkit.preprocessing import LibsvmScaler
    X, y = load_svmlight_file(str(DATA / "svmguide1"))
    return LibsvmScaler(-1.0, 1.0).fit_transform(X.toarray()), y


def _a9a5k():
    X, y = load_svmlight_file(str(DATA / "a9a"), n_features=123)
    return X[:5000], y[:5000]


#: name → loader of (X, y); X is dense or int32-indexed CSR, the same object for every system.
SETS = {"svmguide1": _svmguide1,
        "heart_scale": lambda: load_svmlight_file(str(DATA / "heart_scale")),
        "a9a5k": _a9a5k}
SYSTEMS = ("svmkit", "scikit-learn", "libsvm")
LOG2C = tuple(range(-5, 16, 2))
LOG2G = tuple(range(3, -16, -2))


def dual_objective(X, gamma, sv, coef):
    """½ cᵀKc − Σ|c| over the support vectors (binary C-SVC dual; the sign of c does not matter)."""
    Xs = X[np.asarray(sv)]
    K = rbf_kernel(Xs.toarray() if sp.issparse(Xs) else Xs, gamma=gamma)
    coef = np.asarray(coef, dtype=np.float64)
    return float(0.5 * coef @ K @ coef - np.abs(coef).sum())


class Estimator:
    """svmkit's or scikit-learn's SVC; fit returns (seconds, SV indices, y_i alpha_i, own objective)."""

    def __init__(self, cls, X, y, cache):
        self.cls, self.X, self.y, self.kw = cls, X, y, {} if cache is None else {"cache_size": cache}

    def fit(self, C, gamma):
        m = self.cls(C=C, kernel="rbf", gamma=gamma, tol=1e-3, shrinking=True, **self.kw)
        t = time.perf_counter()
        m.fit(self.X, self.y)
        sec = time.perf_counter() - t
        coef = m.dual_coef_.toarray() if sp.issparse(m.dual_coef_) else m.dual_coef_  # sklearn, on CSR
        own = getattr(m, "objective_", None)
        return sec, m.support_, coef[0], None if own is None else float(own[0])


class Libsvm:
    """libsvm-official's svm_train on an svm_problem built once; only svm_train is timed."""

    def __init__(self, X, y, cache):
        from libsvm.svmutil import svm_parameter, svm_problem, svm_train
        self.prob = svm_problem(y, X)  # the models point into it: keep it alive
        self.param, self.train = svm_parameter, svm_train
        self.cache = "" if cache is None else f" -m {cache}"

    def fit(self, C, gamma):
        param = self.param(f"-s 0 -t 2 -c {C!r} -g {gamma!r} -e 0.001 -q{self.cache}")
        t = time.perf_counter()
        m = self.train(self.prob, param)
        sec = time.perf_counter() - t
        coef = np.array([c[0] for c in m.get_sv_coef()])
        return sec, np.asarray(m.get_sv_indices()) - 1, coef, None


def make_system(name, X, y, cache):
    if name == "libsvm":
        return Libsvm(X, y, cache)
    if name == "svmkit":
        import svmkit
        est = Estimator(svmkit.SVC, X, y, cache)
        est.fit(1.0, 1.0)  # untimed: loads the compiled loops for this kind of input
        return est
    from sklearn.svm import SVC
    return Estimator(SVC, X, y, cache)


def run_set(name, systems, cells, repeat, cache):
    X, y = SETS[name]()
    X = _int32(X)
    peers = {}
    for s in systems:
        try:
            peers[s] = make_system(s, X, y, cache)
        except Exception as e:  # recorded in each cell below
            peers[s] = e
    records = []
    for lc, lg in cells:
        C, gamma = 2.0**lc, 2.0**lg
        for s, peer in peers.items():
            rec = {"set": name, "system": s, "log2c": lc, "log2g": lg}
            try:
                if isinstance(peer, Exception):
                    raise peer
                fits = [peer.fit(C, gamma) for _ in range(repeat)]
                sec, sv, coef, own = fits[-1]
                rec.update(fit_s=min(f[0] for f in fits), n_sv=int(len(sv)),
                           obj=dual_objective(X, gamma, sv, coef), own_obj=own)
            except Exception as e:  # a peer's failure is a result, not the end of the run
                rec["error"] = f"{type(e).__name__}: {e}"
            records.append(rec)
    return records


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def summary(records, systems):
    """Per set and system: the cells every system fitted, their total fit seconds and LIBSVM's
    total over this system's."""
    rows = []
    for name in dict.fromkeys(r["set"] for r in records):
        fitted = {}
        for r in records:
            if r["set"] == name and "fit_s" in r:
                fitted.setdefault((r["log2c"], r["log2g"]), {})[r["system"]] = r["fit_s"]
        done = [c for c, by in fitted.items() if all(s in by for s in systems)]
        total = {s: sum(fitted[c][s] for c in done) for s in systems}
        rows += [{"set": name, "system": s, "cells": len(done), "total fit s": total[s],
                  "libsvm/this": total["libsvm"] / total[s] if "libsvm" in total and total[s] else None}
                 for s in systems]
    return rows


def report(name, records, systems):
    by = {(r["log2c"], r["log2g"], r["system"]): r for r in records}
    cells = sorted({(r["log2c"], r["log2g"]) for r in records}, key=lambda c: (c[0], -c[1]))

    def get(c, s, key):
        return by.get((*c, s), {}).get(key)

    def ratio(c, peer):
        a, b = get(c, peer, "fit_s"), get(c, "svmkit", "fit_s")
        return a / b if a is not None and b else None

    def rel(c, s):
        a, b = get(c, s, "obj"), get(c, "libsvm", "obj")
        return (a - b) / abs(b) if a is not None and b else None

    print(f"\n## {name}\n")
    print("| log2C | log2γ | " + " | ".join(f"{s} s" for s in systems)
          + " | libsvm/svmkit | sklearn/svmkit | obj rel. diff vs LIBSVM | "
          + " | ".join(f"#SV {s}" for s in systems) + " |")
    print("|" + "---|" * (2 * len(systems) + 5))
    for c in cells:
        print(f"| {c[0]} | {c[1]} | " + " | ".join(_fmt(get(c, s, "fit_s"), ".3f") for s in systems)
              + f" | {_fmt(ratio(c, 'libsvm'), '.2f')} | {_fmt(ratio(c, 'scikit-learn'), '.2f')}"
              + f" | {_fmt(rel(c, 'svmkit'), '.1e')} | "
              + " | ".join(_fmt(get(c, s, "n_sv"), "d") for s in systems) + " |")

    print()
    for r in records:
        if "error" in r:
            print(f"- failed: {r['system']} at log2C {r['log2c']}, log2γ {r['log2g']}: {r['error']}")
    done = [c for c in cells if all(get(c, s, "fit_s") is not None for s in systems)]
    total = {s: sum(get(c, s, "fit_s") for c in done) for s in systems}
    print(f"- total fit s over the {len(done)} cells every system fitted: "
          + ", ".join(f"{s} {t:.2f}" for s, t in total.items())
          + "".join(f"; {p} / svmkit {total[p] / total['svmkit']:.2f}x"
                    for p in systems if p != "svmkit" and total.get("svmkit")))
    if "svmkit" in systems and "libsvm" in systems:
        hard = [c for c in done if c[0] >= 0 and get(c, "libsvm", "fit_s") > 0.05]
        peers = [p for p in systems if p != "svmkit"]
        slower = {p: [c for c in hard if get(c, "svmkit", "fit_s") > get(c, p, "fit_s")] for p in peers}
        print(f"- cells with C >= 1 where LIBSVM takes > 50 ms: {len(hard)}; svmkit is slower than "
              + ", ".join(f"{p} in {len(v)}" for p, v in slower.items()))
        for c in hard:
            if any(c in v for v in slower.values()):
                print(f"  - log2C {c[0]}, log2γ {c[1]}: "
                      + ", ".join(f"{s} {get(c, s, 'fit_s'):.3f} s" for s in systems))
    for s in (s for s in systems if s != "libsvm" and "libsvm" in systems):
        objs = [(abs(rel(c, s)), c) for c in cells if rel(c, s) is not None]
        nsv = [(100 * abs(get(c, s, "n_sv") - get(c, "libsvm", "n_sv")) / get(c, "libsvm", "n_sv"), c)
               for c in cells if get(c, s, "n_sv") and get(c, "libsvm", "n_sv")]
        if objs:
            (o, oc), (n, nc) = max(objs), max(nsv)
            print(f"- {s} vs LIBSVM: max |obj rel. diff| {o:.1e} (log2C {oc[0]}, log2γ {oc[1]}), "
                  f"max |#SV diff| {n:.1f} % (log2C {nc[0]}, log2γ {nc[1]})")
    own = [abs(r["own_obj"] - r["obj"]) / abs(r["obj"]) for r in records
           if r["system"] == "svmkit" and r.get("own_obj") is not None and r["obj"]]
    if own:
        print(f"- svmkit objective_[0] vs its recomputed objective: max rel. diff {max(own):.1e}")


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def _ints(text):
    return tuple(int(v) for v in text.split(","))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated data set names")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated systems")
    ap.add_argument("--log2c", type=_ints, default=LOG2C, help="comma-separated log2 C values")
    ap.add_argument("--log2g", type=_ints, default=LOG2G, help="comma-separated log2 gamma values")
    ap.add_argument("--repeat", type=int, default=1, help="fits per cell and system; the fastest counts")
    ap.add_argument("--cache", type=float, help="kernel cache in MB for every system")
    ap.add_argument("--json", help="write every record to this file")
    # argparse takes a list such as "-5,7,15" for an option; a leading space makes it a value
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args([" " + a if re.fullmatch(r"-\d[\d,-]*", a) else a for a in argv])
    systems = [s for s in args.systems.split(",") if s]
    cells = [(c, g) for c in args.log2c for g in args.log2g]
    machine = (f"{platform.platform()}, {_cpu()}, {os.cpu_count()} CPUs; Python {platform.python_version()}, "
               + ", ".join(f"{p} {version(p)}" for p in ("numpy", "scikit-learn", "libsvm-official"))
               # svmkit's own version: it runs from a source tree as well as installed
               + f", svmkit {__import__('svmkit').__version__}")
    print(f"# machine: {machine}")
    records = []
    for name in args.sets.split(","):
        recs = run_set(name, systems, cells, args.repeat, args.cache)
        report(name, recs, systems)
        sys.stdout.flush()
        records += recs
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "records": records}, f, indent=1)
    write("bench_small", summary(records, systems), notes=f"{len(cells)} cells (log2 C × log2 γ) per set; total fit "
          "seconds over the cells every system fitted; `libsvm/this` is LIBSVM's total over this system's.",
          plots=[{"kind": "bars", "value": "libsvm/this", "label": ["set", "system"], "reference": 1,
                  "xlabel": "LIBSVM total fit s / this system's"}])


if __name__ == "__main__":
    main()
