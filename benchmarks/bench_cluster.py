"""The cascade SVC on a Dask cluster against the in-memory fit, and its time projected to more
workers from the measured rounds.

    python benchmarks/bench_cluster.py [--sets a9a,w8a,synth1m,noisy,synth10m] [--rows N] [--memory 4GB] [--out DIR]
                                      [--cascade-only | --memory-only] [--verbose] [--max-rounds K] [--resume]
    python benchmarks/bench_cluster.py --project DIR/cluster.json     (the projection only)

Each set is fitted by SVC(C=1, γ='scale') in memory (in this process) and by the cascade on a
LocalCluster of 2 worker processes of one thread each, each limited to `--memory`, started
afresh per set so that each worker's peak memory (ru_maxrss) is the set's; X is cut into 4
partitions (the synthetic sets: one per ROWS_PER_PART rows, generated on the workers, so that
neither the client nor the in-memory fit reads them from a file). Printed per set: seconds,
cascade rounds, #SV, the objectives' relative difference, each worker's peak memory and, per
round of the global check, the violators, those admitted, the gap, the rows skipped and
checked, the coefficients changed and the seconds.

`--memory-only` fits each set in memory alone, the same data and fit as a full run's, and
writes its seconds, #SV, objective and duality gap to OUT/SET.memory.json (a set whose cascade
was measured in segments is compared with its in-memory fit so).

A fit longer than one sitting runs in segments: `--max-rounds K` stops each set's cascade after K
rounds and saves it (OUT/SET.svmkit, its segments' seconds, rounds and history beside it in
OUT/SET.svmkit.json); `--resume` continues it from there (`warm_start`: from the saved support,
in place of the tree), in as many runs as it takes, and a run that ends removes them. The
seconds printed are the segments' sum, each segment's fit timed as a whole run's is (the
workers' start outside it); its rounds are numbered on from the earlier ones'. A stopped set
prints its rounds so far and stays out of the results; a run in segments is no base of the
projection.

synth1m: 1,000,000 × 50, two classes 4 apart on a first axis of unit variance, the other 49 of
standard deviation 0.1, with 0.01 % of the labels flipped (the flipped rows are bounded support
vectors), C = 1. noisy: the same with 5 % of the labels flipped, `--rows` rows (default 1M):
about 14 % of the rows are support vectors (measured in memory at 20,000 rows: 13.8 %, half
of them bounded). synth10m: synth1m at 10,000,000 rows, by the cascade only (the in-memory fit
would take hours on 2 cores), on workers of `--big-memory` each: X alone is 4 GB.

The projection replays the rounds of the largest synthetic run in the results (synth10m when
there, else noisy, else synth1m) on W = 16, 64 and 256 workers for N = 10M and 100M rows, one
partition per worker; the assumptions are printed with it (`ASSUMPTIONS`). It writes
cluster.json (every measurement, round and task timing) and projection.png in --out.
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

#: The projection's constants (see ASSUMPTIONS).
BANDWIDTH = 1.25e9
TASK_OVERHEAD = 2e-3
WORKERS = (16, 64, 256)
ROWS = (10_000_000, 100_000_000)
DATA = Path("/work/shared/data")
SYNTH_FEATURES, SYNTH_SPREAD = 50, 0.1
#: Rows per partition of the synthetic sets, and the fraction of their labels flipped.
ROWS_PER_PART = 125_000
FLIP = {"synth1m": 1e-4, "synth10m": 1e-4, "noisy": 0.05}
SYNTH_ROWS = {"synth1m": 1_000_000, "synth10m": 10_000_000}
ASSUMPTIONS = f"""\
  - one partition of N/W rows per worker; a leaf's time grows as (rows)² (the SMO's cost, #SV
    proportional to the rows); a merge's and a round solve's as (variables)², measured on the
    run's top merge and its round solves; #SV, the variables of every solve and the
    coefficients changed in each round grow in proportion to N (no saturation), so each tree
    level doubles the variables;
  - each round is one of the run's own, in the same number: its check computes the same
    fraction of kernel values (rows checked × coefficients changed, and at a full check the
    skipped rows × the coefficients changed since they were skipped), i.e. (N/N_run)² times
    as many, spread over the W workers, at the run's measured seconds per kernel value on
    one core;
  - every transfer of support vectors and changed coefficients (d + 1 float64 per row) moves
    at {BANDWIDTH:.3g} bytes/s, a round's change sent from one worker to every other one after
    another; the scheduler's overhead is {TASK_OVERHEAD:g} s a task."""


def synthetic_block(seed, rows, flip, d=SYNTH_FEATURES):
    rng = np.random.default_rng(seed)
    X = SYNTH_SPREAD * rng.normal(size=(rows, d))
    X[:, 0] = rng.normal(size=rows)
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 2.0 * y
    flipped = rng.random(rows) < flip
    return X, np.where(flipped, -y, y)


def part_sizes(n):
    """The rows of each block of a synthetic set of n rows: ROWS_PER_PART each, at least four
    blocks."""
    parts = max(4, n // ROWS_PER_PART)
    return [n // parts + (k < n % parts) for k in range(parts)]


def synthetic(n, flip):
    """(X, y) as Dask arrays generated on the workers, in the blocks of `part_sizes`."""
    import dask
    import dask.array as da

    sizes = part_sizes(n)
    blocks = [dask.delayed(synthetic_block)(k, rows, flip) for k, rows in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(b[0], (rows, SYNTH_FEATURES), np.float64) for b, rows in zip(blocks, sizes)])
    y = da.concatenate([da.from_delayed(b[1], (rows,), np.int64) for b, rows in zip(blocks, sizes)])
    return X, y


def libsvm(name):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(DATA / name))
    return X.toarray(), y


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def duality_gap(model, X, y, C):
    """(P − D) / |D| of a binary SVC fit over every row of (X, y), on the workers for Dask arrays:
    the primal ½‖w‖² + C Σ max(0, 1 − y_i f(x_i)) minus the dual Σ α − ½‖w‖² (Cortes & Vapnik
    1995), ‖w‖² = cᵀK_SS c from the support vectors' decision values. Every feasible α's gap
    bounds how far its dual objective is from the optimum, so it certifies the fit without
    another solver."""
    f = model.decision_function(X)
    sign = np.where(y == model.classes_[1], 1.0, -1.0)
    hinge = float(np.maximum(0.0, 1.0 - sign * f).sum())
    c = model.dual_coef_[0]
    w2 = float(c @ (model.decision_function(model.support_vectors_) - model.intercept_[0]))
    dual = np.abs(c).sum() - 0.5 * w2
    return (0.5 * w2 + C * hinge - dual) / abs(dual), -dual


#: What a run in segments keeps between them (OUT/SET.svmkit.json); empty before the first.
NO_SEGMENTS = {"segments": [], "rounds": [], "history": [], "timings": [], "segment_peak_bytes": []}


def _renumbered(label, offset):
    """A segment's task label with its round numbered on by `offset` rounds (its start's solve,
    "start", becomes "start OFFSET")."""
    kind, *rest = label.split()
    if kind in ("check", "round") and rest and rest[0].isdigit():
        return " ".join([kind, str(int(rest[0]) + offset), *rest[1:]])
    return f"{label} {offset}" if kind == "start" else label


def continued(earlier, fit, seconds, peaks):
    """The segments so far: `earlier`'s and this one's (`fit`, its seconds and the workers'
    peak bytes), its rounds and task labels numbered on from the earlier rounds, its round 0
    marked as the start's solve after a first segment."""
    offset = sum(earlier["rounds"])
    history = [{**h, "round": h["round"] + offset, "start": bool(earlier["segments"]) and h["round"] == 0}
               for h in fit.cascade_history_]
    return {"segments": earlier["segments"] + [seconds], "rounds": earlier["rounds"] + [int(fit.cascade_rounds_[0])],
            "history": earlier["history"] + history,
            "timings": earlier["timings"] + [(_renumbered(label, offset), t) for label, t in fit.cascade_timings_],
            "segment_peak_bytes": earlier["segment_peak_bytes"] + [peaks]}


def run_set(name, memory, rows, in_memory=True, verbose=False, max_rounds=None, saved=None, resume=False):
    """One set fitted by the cascade (and in memory unless `in_memory` is False, or for synth10m);
    `verbose`: the cascade prints its rounds as they end. `max_rounds` stops the cascade; a
    stopped one is saved to `saved` (a path) with the segments so far beside it (.json), and
    `resume` continues from there (warm_start: from its support), its seconds and rounds
    added to the earlier segments'. A run that ends removes what it continued from."""
    import dask.array as da
    from distributed import Client, LocalCluster

    import svmkit
    from svmkit.parallel.cluster import threads_kept

    out = {"set": name, "worker_memory_limit": memory}
    sidecar = None if saved is None else Path(f"{saved}.json")
    if resume and not sidecar.exists():
        raise SystemExit(f"--resume: {sidecar} is missing (a --max-rounds run saves it)")
    # the in-memory fit in this process on every core: Dask's nanny leaves OMP_NUM_THREADS=1 here
    with threads_kept(), LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        if name in FLIP:
            X, y = synthetic(SYNTH_ROWS.get(name, rows), FLIP[name])
        else:
            Xm, ym = libsvm(name)
            X, y = da.from_array(Xm, chunks=(-(-Xm.shape[0] // 4), -1)), da.from_array(ym, chunks=-(-Xm.shape[0] // 4))
        options = svmkit.Options(max_rounds=max_rounds)
        earlier = json.loads(sidecar.read_text()) if resume else NO_SEGMENTS
        cascade = (svmkit.load(saved).set_params(warm_start=True, verbose=verbose, options=options) if resume else
                   svmkit.SVC(C=1.0, cache_size=1000, verbose=verbose, options=options))
        t = time.perf_counter()
        cascade.fit(X, y)
        seconds = time.perf_counter() - t
        if resume and "start" not in (label for label, _ in cascade.cascade_timings_):
            print(f"{name}: the saved start was not taken (other data): this run counts alone", flush=True)
            earlier = NO_SEGMENTS
        run = continued(earlier, cascade, seconds, sorted(client.run(peak_rss).values()))
        out.update(segments=run["segments"], cascade_seconds=sum(run["segments"]), rounds=sum(run["rounds"]),
                   rounds_per_segment=run["rounds"], history=run["history"], timings=run["timings"],
                   segment_peak_bytes=run["segment_peak_bytes"],
                   worker_peak_bytes=np.max(run["segment_peak_bytes"], axis=0).tolist(),
                   n_sv_cascade=int(cascade.support_.size), objective_cascade=float(cascade.objective_[0]),
                   n=int(X.shape[0]), d=int(X.shape[1]), parts=len(X.chunks[0]), optimal=not cascade.fit_status_)
        if saved is not None and cascade.fit_status_:
            svmkit.save(cascade, saved)
            sidecar.write_text(json.dumps(run, default=float))
            return out
        if saved is not None:
            Path(saved).unlink(missing_ok=True)
            sidecar.unlink(missing_ok=True)
        t = time.perf_counter()
        out["duality_gap"], out["objective_from_gap"] = duality_gap(cascade, X, y, 1.0)
        out["duality_gap_seconds"] = time.perf_counter() - t
        if name == "synth10m" or not in_memory:
            return out
        if name in FLIP:
            Xm, ym = (np.asarray(v) for v in client.compute([X, y], sync=True))
    out.update(fit_in_memory(Xm, ym))
    out["objective_rel_diff"] = abs(out["objective_cascade"] / out["objective_memory"] - 1)
    return out


def fit_in_memory(X, y, gap=False):
    """The in-memory fit of (X, y) on every core of this process: its seconds, #SV and objective,
    and with `gap` its duality gap over every row."""
    import svmkit

    t = time.perf_counter()
    fit = svmkit.SVC(C=1.0, cache_size=1000).fit(X, y)
    out = {"memory_seconds": time.perf_counter() - t, "n_sv_memory": int(fit.support_.size),
           "objective_memory": float(fit.objective_[0])}
    if gap:
        out["duality_gap_memory"], out["objective_from_gap_memory"] = duality_gap(fit, X, y, 1.0)
    return out


def in_memory_only(name, rows, out_dir):
    """`--memory-only`: the set `name` (the synthetic ones generated here, block by block as the
    workers do) fitted in memory, printed and written to OUT/NAME.memory.json."""
    if name in FLIP:
        n = SYNTH_ROWS.get(name, rows)
        blocks = [synthetic_block(k, size, FLIP[name]) for k, size in enumerate(part_sizes(n))]
        X, y = np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])
    else:
        X, y = libsvm(name)
    out = {"set": name, "n": int(X.shape[0]), "d": int(X.shape[1]), **fit_in_memory(X, y, gap=True)}
    (out_dir / f"{name}.memory.json").write_text(json.dumps(out, indent=1))
    print(f"{name}: n={out['n']} in memory {out['memory_seconds']:.1f} s, #SV {out['n_sv_memory']}, objective "
          f"{out['objective_memory']:.8g} | duality gap (P − D)/|D| {out['duality_gap_memory']:.2e}", flush=True)


def _seconds(timings, kind):
    return [t for label, t in timings if label.startswith(kind)]


def project(measured, n, workers):
    """Projected seconds of the cascade on `workers` workers for n rows, from the run
    `measured` (see ASSUMPTIONS)."""
    timings, history = measured["timings"], [h for h in measured["history"] if h["problem"] == 0]
    n0, d = measured["n"], measured["d"]
    scale = n / n0
    rows0, rows = n0 / measured["parts"], n / workers
    leaf = max(_seconds(timings, "leaf")) * (rows / rows0) ** 2
    root_vars = history[0]["n_vars"]
    merge0 = max(_seconds(timings, "merge"), default=leaf)
    total = leaf + TASK_OVERHEAD
    level_vars = root_vars * scale / workers
    for _ in range(int(np.ceil(np.log2(workers)))):
        level_vars *= 2
        total += merge0 * (level_vars / root_vars) ** 2 + 2 * level_vars * d * 8 / BANDWIDTH + TASK_OVERHEAD
    per_value = sum(_seconds(timings, "check")) / max(1, sum(h["kernel_values"] for h in history))
    solves = {int(label.split()[1]): t for label, t in timings if label.startswith("round")}
    for h in history[1:]:
        total += per_value * h["kernel_values"] * scale**2 / workers + 3 * TASK_OVERHEAD
        total += workers * h["changed"] * scale * (d + 1) * 8 / BANDWIDTH
        if h["round"] in solves:
            total += solves[h["round"]] * scale**2 + TASK_OVERHEAD
    return total


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
    ax.set_title(f"Cascade SVC, replayed from the {measured['set']} run's rounds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "projection.png", dpi=120)
    return table


def print_rounds(r):
    """The tree's and each round's progress of problem 0, with its tasks' seconds on the workers."""
    timings = r["timings"]
    for h in r["history"]:
        if h["problem"]:
            continue
        if h.get("start"):
            solve = sum(t for label, t in timings if label == f"start {h['round']}")
            print(f"  start: #SV {h['n_sv']}, solved over {h['n_vars']} variables, {h['round_seconds']:.1f} s "
                  f"(the solve {solve:.1f} s)")
            continue
        if h["round"] == 0:
            merges = _seconds(timings, "merge 0 ")
            print(f"  tree: #SV {h['n_sv']}, root over {h['n_vars']} variables, {h['round_seconds']:.1f} s "
                  f"(leaves {sum(_seconds(timings, 'leaf 0')):.1f} s, merges {sum(merges):.1f} s, the top one "
                  f"{max(merges, default=0):.1f} s, summed over the tasks)")
            continue
        check, solve = (sum(t for label, t in timings if label.split()[:2] == [kind, str(h["round"])])
                        for kind in ("check", "round"))
        print(f"  round {h['round']}: {h['violating']} violating, {h['admitted']} admitted, gap {h['gap']:.3g}, "
              f"{h['skipped']} rows skipped, {h['checked']} checked, {h['changed']} coefficients changed, "
              f"#SV {h['n_sv']} over {h['n_vars']} variables, {h['round_seconds']:.1f} s (check {check:.1f} s, "
              f"solve {solve:.1f} s, summed over the tasks)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="a9a,w8a,synth1m,noisy")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the noisy set")
    parser.add_argument("--memory", default="4GB")
    parser.add_argument("--big-memory", default="6GB", help="each worker's limit for synth10m")
    fits = parser.add_mutually_exclusive_group()
    fits.add_argument("--cascade-only", action="store_true", help="no in-memory fits")
    fits.add_argument("--memory-only", action="store_true", help="the in-memory fits alone, to OUT/SET.memory.json")
    parser.add_argument("--verbose", action="store_true", help="print the cascade's rounds as they end")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--project", default=None, help="a cluster.json to project from, without fitting")
    parser.add_argument("--max-rounds", type=int, default=None,
                        help="stop the cascade after this many rounds and save it (OUT/SET.svmkit) for --resume")
    parser.add_argument("--resume", action="store_true",
                        help="continue each set's cascade from OUT/SET.svmkit, saved by an earlier --max-rounds run")
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.memory_only:
        for name in args.sets.split(","):
            in_memory_only(name, args.rows, out_dir)
        return
    if args.project:
        results = json.loads(Path(args.project).read_text())
    else:
        results = []
        for name in args.sets.split(","):
            saved = out_dir / f"{name}.svmkit" if args.max_rounds is not None or args.resume else None
            r = run_set(name, args.big_memory if name == "synth10m" else args.memory, args.rows,
                        not args.cascade_only, args.verbose, args.max_rounds, saved, args.resume)
            if not r["optimal"]:
                print(f"{name}: stopped after {r['rounds']} rounds, {r['cascade_seconds']:.1f} s in "
                      f"{len(r['segments'])} segments, objective {r['objective_cascade']:.6g}; saved to {saved}",
                      flush=True)
                print_rounds(r)
                continue
            results.append(r)
            (out_dir / "cluster.json").write_text(json.dumps(results, indent=1, default=float))
            memory = "" if "memory_seconds" not in r else (
                f" | in memory {r['memory_seconds']:.1f} s, #SV {r['n_sv_memory']} | "
                f"objective rel. diff {r['objective_rel_diff']:.2e}")
            print(f"{name}: n={r['n']} cascade {r['cascade_seconds']:.1f} s "
                  f"({' + '.join(f'{s:.1f}' for s in r['segments'])}), {r['rounds']} rounds, "
                  f"#SV {r['n_sv_cascade']}, objective {r['objective_cascade']:.6g}{memory} | worker peak MB "
                  f"{[round(b / 2**20) for b in r['worker_peak_bytes']]} | duality gap (P − D)/|D| "
                  f"{r['duality_gap']:.2e} over every row ({r['duality_gap_seconds']:.1f} s)", flush=True)
            print_rounds(r)
    if not results:
        return
    rows = [{"set": r["set"], "rows": r["n"], "features": r["d"], "cascade s": r["cascade_seconds"],
             "rounds": r["rounds"], "#SV cascade": r["n_sv_cascade"], "in memory s": r.get("memory_seconds"),
             "#SV in memory": r.get("n_sv_memory"), "objective rel. diff": r.get("objective_rel_diff"),
             "worker peak MB": " / ".join(str(round(b / 2**20)) for b in r["worker_peak_bytes"]),
             "duality gap": r.get("duality_gap")} for r in results]
    # a run in segments replays no tree of its own
    synth = sorted((r for r in results if r["set"] in FLIP and len(r.get("segments", [0])) == 1),
                   key=lambda r: r["n"])
    if synth:
        base = synth[-1]
        table = plot_projection(base, out_dir)
        print(f"projected seconds from the {base['set']} run ({base['n']:,} rows, {base['rounds']} rounds), "
              f"workers {', '.join(map(str, WORKERS))}:")
        for n, secs in table.items():
            print(f"  N = {n:>11,}: " + ", ".join(f"{s:.0f}" for s in secs))
            rows += [{"set": f"projected, N = {n:,}", "workers": w, "projected s": t} for w, t in zip(WORKERS, secs)]
        print("assumptions:\n" + ASSUMPTIONS)
    write("bench_cluster", rows,
          notes="SVC(C=1, γ='scale', tol 1e-3) by the cascade on a LocalCluster of 2 worker processes (one "
                "thread, --memory each) against the in-memory fit; the projection replays the largest synthetic "
                "run's rounds on W workers under the assumptions the script prints. Measurements kept in "
                f"{out_dir / 'cluster.json'}.",
          plots=[{"kind": "lines", "x": "workers", "y": "projected s", "series": "set",
                  "title": "Cascade SVC, projected from the measured rounds", "xlabel": "workers",
                  "ylabel": "projected seconds"}])
    print(f"cpu: {os.cpu_count()} cores; results in {out_dir}")


if __name__ == "__main__":
    main()
