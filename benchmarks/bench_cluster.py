"""The cascade SVC on a Dask cluster against the in-memory fit, and its time projected to more
workers from the measured tasks.

    python benchmarks/bench_cluster.py [--sets a9a,w8a,synth1m,synth10m] [--memory 4GB] [--out DIR]
    python benchmarks/bench_cluster.py --project DIR/cluster.json     (the projection only)

Each set is fitted by SVC(C=1, γ='scale') in memory (in this process) and by the cascade on a
LocalCluster of 2 worker processes of one thread each, each limited to `--memory`, started
afresh per set so that each worker's peak memory (ru_maxrss) is the set's; X is cut into 4
partitions (the synthetic set: 8, generated on the workers, so that neither the client nor the
in-memory fit reads it from a file). Printed per set: seconds, cascade rounds, #SV, the
objectives' relative difference and each worker's peak memory. synth1m: 1,000,000 × 50, two
classes 4 apart on a first axis of unit variance, the other 49 of standard deviation 0.1, with
0.01 % of the labels flipped (the flipped rows are bounded support vectors), C = 1. synth10m:
the same at 10,000,000 rows in 80 partitions, by the cascade only (the in-memory fit would take
hours on 2 cores), on workers of `--big-memory` each: X alone is 4 GB.

The projection replays the synthetic set's task timings (`cascade_timings_`) on W = 16, 64 and
256 workers for N = 1M and 10M rows, one partition per worker, under stated assumptions:
  - a leaf's time grows as (rows)², the SMO cost with #SV proportional to the rows (SV_FRACTION
    measured on the set); a merge's and a round solve's as (variables)²;
  - #SV grows in proportion to N (no saturation), so each tree level doubles the variables;
  - a check's time grows as (rows of its partition) × #SV;
  - every transfer of support vectors (d float64 per row) and of their coefficients moves at
    BANDWIDTH bytes/s, the root's support sent to every worker one after another for a check;
  - the rounds are the measured ones; the scheduler's overhead is TASK_OVERHEAD s a task.
It writes cluster.json (every measurement and timing) and projection.png in --out.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

import numpy as np

from _results import write  # beside this script, whose folder is on sys.path

#: The projection's assumptions (see the module docstring).
BANDWIDTH = 1.25e9
TASK_OVERHEAD = 2e-3
WORKERS = (16, 64, 256)
ROWS = (1_000_000, 10_000_000)
DATA = Path("/work/shared/data")
SYNTH_FEATURES, SYNTH_FLIP, SYNTH_SPREAD = 50, 1e-4, 0.1
#: Rows and partitions of the synthetic sets, and the partitions the projection's run used.
SYNTH = {"synth1m": (1_000_000, 8), "synth10m": (10_000_000, 80)}
SYNTH_PARTS = SYNTH["synth1m"][1]


def synthetic_block(seed, rows, d=SYNTH_FEATURES):
    rng = np.random.default_rng(seed)
    X = SYNTH_SPREAD * rng.normal(size=(rows, d))
    X[:, 0] = rng.normal(size=rows)
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 2.0 * y
    flip = rng.random(rows) < SYNTH_FLIP
    return X, np.where(flip, -y, y)


def synthetic(n, parts):
    """(X, y) as Dask arrays generated block by block on the workers."""
    import dask
    import dask.array as da

    rows = n // parts
    blocks = [dask.delayed(synthetic_block)(k, rows) for k in range(parts)]
    X = da.concatenate([da.from_delayed(b[0], (rows, SYNTH_FEATURES), np.float64) for b in blocks])
    y = da.concatenate([da.from_delayed(b[1], (rows,), np.int64) for b in blocks])
    return X, y


def libsvm(name):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(DATA / name))
    return X.toarray(), y


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_set(name, memory):
    import dask.array as da
    from distributed import Client, LocalCluster

    import svmkit

    out = {"set": name, "worker_memory_limit": memory}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        if name in SYNTH:
            X, y = synthetic(*SYNTH[name])
        else:
            Xm, ym = libsvm(name)
            X, y = da.from_array(Xm, chunks=(-(-Xm.shape[0] // 4), -1)), da.from_array(ym, chunks=-(-Xm.shape[0] // 4))
        t = time.perf_counter()
        cascade = svmkit.SVC(C=1.0, cache_size=1000).fit(X, y)
        out["cascade_seconds"] = time.perf_counter() - t
        out["worker_peak_bytes"] = sorted(client.run(peak_rss).values())
        out.update(rounds=int(cascade.cascade_rounds_[0]), n_sv_cascade=int(cascade.support_.size),
                   objective_cascade=float(cascade.objective_[0]), history=cascade.cascade_history_,
                   timings=cascade.cascade_timings_, n=int(X.shape[0]), d=int(X.shape[1]))
        if name == "synth10m":
            return out
        if name in SYNTH:
            Xm, ym = (np.asarray(v) for v in client.compute([X, y], sync=True))
    t = time.perf_counter()
    memory_fit = svmkit.SVC(C=1.0, cache_size=1000).fit(Xm, ym)
    out.update(memory_seconds=time.perf_counter() - t, n_sv_memory=int(memory_fit.support_.size),
               objective_memory=float(memory_fit.objective_[0]))
    out["objective_rel_diff"] = abs(out["objective_cascade"] / out["objective_memory"] - 1)
    return out


def _per_kind(timings, kind):
    return [t for label, t in timings if label.startswith(kind)]


def project(measured, n, workers):
    """Projected seconds of the cascade on `workers` workers for n rows (see the assumptions)."""
    timings = measured["timings"]
    n0, d, parts0 = measured["n"], measured["d"], SYNTH_PARTS
    rows0, rows = n0 / parts0, n / workers
    sv_fraction = measured["n_sv_cascade"] / n0
    leaf = max(_per_kind(timings, "leaf")) * (rows / rows0) ** 2
    leaf_sv = sv_fraction * rows
    merges = sorted(_per_kind(timings, "merge"))
    merge0 = merges[-1] if merges else leaf
    merge_vars0 = sv_fraction * n0  # the measured root's union
    total = leaf + TASK_OVERHEAD
    level_vars = leaf_sv
    for _ in range(int(np.ceil(np.log2(workers)))):
        level_vars *= 2
        total += merge0 * (level_vars / merge_vars0) ** 2 + 2 * level_vars * d * 8 / BANDWIDTH + TASK_OVERHEAD
    n_sv = sv_fraction * n
    checks = _per_kind(timings, "check")
    check0 = max(checks) if checks else 0.0
    solves = _per_kind(timings, "round")
    solve0 = max(solves) if solves else 0.0
    rounds = max(1, measured["rounds"])
    per_round = (check0 * (rows / rows0) * (n_sv / measured["n_sv_cascade"])
                 + workers * n_sv * (d + 1) * 8 / BANDWIDTH
                 + solve0 * (n_sv / measured["n_sv_cascade"]) ** 2 + 2 * TASK_OVERHEAD)
    return total + rounds * per_round


def plot_projection(measured, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    table = {}
    for n in ROWS:
        secs = [project(measured, n, w) for w in WORKERS]
        table[n] = secs
        ax.plot(WORKERS, secs, marker="o", label=f"N = {n:,}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("workers (one partition each)")
    ax.set_ylabel("projected seconds")
    ax.set_title("Cascade SVC, replayed from the 1M-row run's tasks")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "projection.png", dpi=120)
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="a9a,w8a,synth1m")
    parser.add_argument("--memory", default="4GB")
    parser.add_argument("--big-memory", default="6GB", help="each worker's limit for synth10m")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--project", default=None, help="a cluster.json to project from, without fitting")
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.project:
        results = json.loads(Path(args.project).read_text())
    else:
        results = []
        for name in args.sets.split(","):
            r = run_set(name, args.big_memory if name == "synth10m" else args.memory)
            results.append(r)
            (out_dir / "cluster.json").write_text(json.dumps(results, indent=1, default=float))
            if "memory_seconds" not in r:
                print(f"{name}: n={r['n']} cascade {r['cascade_seconds']:.1f} s, {r['rounds']} rounds, "
                      f"#SV {r['n_sv_cascade']}, objective {r['objective_cascade']:.6g} | worker peak MB "
                      f"{[round(b / 2**20) for b in r['worker_peak_bytes']]}", flush=True)
                continue
            print(f"{name}: n={r['n']} cascade {r['cascade_seconds']:.1f} s, {r['rounds']} rounds, "
                  f"#SV {r['n_sv_cascade']} | in memory {r['memory_seconds']:.1f} s, #SV {r['n_sv_memory']} | "
                  f"objective rel. diff {r['objective_rel_diff']:.2e} | worker peak MB "
                  f"{[round(b / 2**20) for b in r['worker_peak_bytes']]}", flush=True)
    rows = [{"set": r["set"], "rows": r["n"], "features": r["d"], "cascade s": r["cascade_seconds"],
             "rounds": r["rounds"], "#SV cascade": r["n_sv_cascade"], "in memory s": r.get("memory_seconds"),
             "#SV in memory": r.get("n_sv_memory"), "objective rel. diff": r.get("objective_rel_diff"),
             "worker peak MB": " / ".join(str(round(b / 2**20)) for b in r["worker_peak_bytes"])} for r in results]
    synth = [r for r in results if r["set"] == "synth1m"]
    if synth:
        table = plot_projection(synth[0], out_dir)
        print("projected seconds (workers " + ", ".join(map(str, WORKERS)) + "):")
        for n, secs in table.items():
            print(f"  N = {n:>10,}: " + ", ".join(f"{s:.0f}" for s in secs))
            rows += [{"set": f"projected, N = {n:,}", "workers": w, "projected s": t} for w, t in zip(WORKERS, secs)]
    write("bench_cluster", rows,
          notes="SVC(C=1, γ='scale', tol 1e-3) by the cascade on a LocalCluster of 2 worker processes (one "
                "thread, --memory each) against the in-memory fit; the projection replays the synth1m run's "
                "task timings on W workers under the assumptions of the script's docstring. Measurements "
                f"kept in {out_dir / 'cluster.json'}.",
          plots=[{"kind": "lines", "x": "workers", "y": "projected s", "series": "set",
                  "title": "Cascade SVC, projected from the 1M-row run", "xlabel": "workers",
                  "ylabel": "projected seconds"}])
    print(f"cpu: {os.cpu_count()} cores; results in {out_dir}")


if __name__ == "__main__":
    main()
