"""svmkit against an earlier commit of itself, in one run: each tree made ready (a tree with the
compiled core has it built in place; a tree of Numba loops has them compiled into its cache by
its warm-up), then each benchmark's svmkit measurement run with the earlier tree's sources and
with this tree's, alternately, the fastest of --rounds of each printed side by side. Where both
fits report them, their dual objectives, intercepts and pair updates are compared too.

    python benchmarks/before_after.py [--base REF] [--rounds 3] [--cases a9a,w8a]

The earlier tree is a git worktree of REF under build/before-after/; both trees' benchmarks are
this tree's scripts, each measurement in a fresh process (`--worker`), the trees' sources put
first on PYTHONPATH. A tree of Numba loops needs `numba` installed beside this one's
dependencies; a tree with the core needs CMake and nanobind (the build's own requirements).
Cases: bench_svc a9a and SVR cadata (fit seconds), a9a.t and w8a's 20 % (predict seconds),
bench_ridge's single fit at N = 10,000, bench_grid svmguide1 (the search's seconds),
bench_linear a9a (both losses).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import site
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from _results import write  # beside this script, whose folder is on sys.path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

#: (label, script, worker arguments, the seconds key of its JSON line)
CASES = [
    ("SVC a9a fit", "bench_svc.py", ("a9a", "svmkit"), "fit"),
    ("SVR cadata fit", "bench_svc.py", ("SVR cadata (80/20)", "svmkit"), "fit"),
    ("SVC a9a.t predict", "bench_svc.py", ("a9a", "svmkit"), "predict"),
    ("SVC w8a (80/20) predict", "bench_svc.py", ("w8a (80/20)", "svmkit"), "predict"),
    ("KernelRidge N=10,000", "bench_ridge.py", ("single", 10000, "svmkit", 2000), "seconds"),
    ("SVMSearchCV svmguide1", "bench_grid.py", ("svmguide1 (scaled)", "svmkit"), "seconds"),
    ("LinearSVC a9a squared hinge", "bench_linear.py", ("a9a", "squared_hinge", "svmkit", 1.0, 0.01), "seconds"),
    ("LinearSVC a9a hinge", "bench_linear.py", ("a9a", "hinge", "svmkit", 1.0, 0.01), "seconds"),
]


def _env(tree: Path) -> dict:
    """The tree's sources first, then this environment's packages. The processes run with -S
    (no site module, so no .pth file): an editable install's import hook would otherwise
    answer for svmkit before any path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / "src"), *site.getsitepackages()])}


def _worktree(ref: str, name: str) -> Path:
    """A fresh git worktree of `ref` (its Numba cache empty)."""
    path = ROOT / "build" / "before-after" / name
    if path.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=True)
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(path), ref], cwd=ROOT, check=True)
    return path


def _prepare(tree: Path) -> tuple[str, float]:
    """Make the tree's compiled code ready: its core built in place (into src/svmkit), or its
    Numba loops compiled into their cache by its warm-up. Returns (what, seconds)."""
    t0 = time.perf_counter()
    if (tree / "CMakeLists.txt").exists():
        build = tree / "build" / "inplace"
        subprocess.run(["cmake", "-S", str(tree), "-B", str(build), f"-DPython_EXECUTABLE={sys.executable}"],
                       check=True, capture_output=True)
        subprocess.run(["cmake", "--build", str(build), "--parallel"], check=True, capture_output=True)
        for module in build.glob("_core*"):
            shutil.copy(module, tree / "src" / "svmkit")
        return "core built", time.perf_counter() - t0
    subprocess.run([sys.executable, "-S", "-m", "svmkit._warmup"], env=_env(tree), check=True, capture_output=True)
    return "warm-up from an empty cache", time.perf_counter() - t0


def _compare(details: dict) -> str:
    """The largest relative difference of the trees' objectives and intercepts, and the ratio
    of their pair updates (or passes), when both fits report them."""
    before, after = details.values()
    keys = [k for k in ("objective", "intercept") if k in before and k in after]
    if not keys:
        return ""
    values = {k: (np.ravel(after[k]), np.ravel(before[k])) for k in keys}
    rel = max(float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))) for a, b in values.values())
    text = f"{', '.join(keys)} rel. diff {rel:.1e}"
    for k in ("n_iter", "passes"):
        if k in before and k in after:
            a, b = np.ravel(after[k]), np.ravel(before[k])
            text += f"; {k} after/before {a.sum() / max(1, b.sum()):.4f}"
    return text


def _measure(tree: Path, script: str, args, key: str):
    out = subprocess.run([sys.executable, "-S", str(BENCH / script), "--worker", *map(str, args)], env=_env(tree),
                         capture_output=True, text=True, timeout=3600, cwd=BENCH)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result[key], result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD~1", help="the earlier commit")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default="", help="comma-separated substrings of the cases' labels")
    args = parser.parse_args(argv)
    base_sha = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    head_sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    trees = {f"before ({base_sha})": _worktree(args.base, "before"), f"after ({head_sha})": _worktree("HEAD", "after")}
    print(f"# {os.cpu_count()} cores; fastest of {args.rounds} alternating rounds; seconds")
    ready = {}
    for label, tree in trees.items():
        what, seconds = _prepare(tree)
        ready[label] = f"{what} {seconds:.1f} s"
        print(f"{label}: {ready[label]}", flush=True)
    table = []
    print("| case | " + " | ".join(trees) + " | after / before | every round (before; after) | fits |")
    print("|---|---|---|---|---|---|")
    wanted = [w for w in args.cases.split(",") if w]
    for label, script, worker_args, key in CASES:
        if wanted and not any(w in label for w in wanted):
            continue
        times = {name: [] for name in trees}
        details = {name: {} for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                seconds, detail = _measure(tree, script, worker_args, key)
                times[name].append(seconds if seconds is not None else float("nan"))
                if seconds is None:
                    print(f"# {label}, {name}: failed: {detail}", flush=True)
                else:
                    details[name] = detail
        best = [min(times[name]) for name in trees]
        rounds = "; ".join(" ".join(f"{t:.3f}" for t in times[name]) for name in trees)
        fits = _compare(details)
        print(f"| {label} | {best[0]:.3f} | {best[1]:.3f} | {best[1] / best[0]:.3f} | {rounds} | {fits} |",
              flush=True)
        table.append({"case": label, "before s": best[0], "after s": best[1], "after/before": best[1] / best[0],
                      "fits": fits})
    write("before_after", table, notes="Fastest of alternating rounds, before and after: "
          + ", ".join(trees) + "; made ready: " + ", ".join(f"{k} {v}" for k, v in ready.items()) + ".",
          plots=[{"kind": "bars", "value": "after/before", "label": ["case"], "reference": 1,
                  "xlabel": "after s / before s"}])
    for tree in trees.values():
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    shutil.rmtree(ROOT / "build" / "before-after", ignore_errors=True)


if __name__ == "__main__":
    main()
