"""One measurement per fresh process, so that each system's memory and first-call costs are its
own: the benchmark script runs itself with `--worker …` and prints one JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: Where the data sets are looked for, in order: $SVMKIT_DATA, shared/data in the repository
#: (what a copy of the working tree to another machine carries), shared/data beside it.
_REPOSITORY = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    """The first of $SVMKIT_DATA, <repository>/shared/data and <repository>/../shared/data that
    exists (the last when none does, so that a missing file is named where it was expected)."""
    candidates = [Path(os.environ["SVMKIT_DATA"])] if os.environ.get("SVMKIT_DATA") else []
    candidates += [_REPOSITORY / "shared" / "data", _REPOSITORY.parent / "shared" / "data"]
    return next((c for c in candidates if c.is_dir()), candidates[-1])


def run_worker(script, args, timeout):
    """Run `python script --worker args…` (a subprocess.TimeoutExpired past `timeout` seconds).
    Returns (the JSON object on its last stdout line, or {"error": its last stderr line} when
    it failed) and its whole stdout."""
    out = subprocess.run([sys.executable, script, "--worker", *map(str, args)], capture_output=True, text=True,
                         timeout=timeout)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}, \
            out.stdout
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stdout


def print_rows(label, rows, seconds_key, cells, n_cells, reference="scikit-learn", digits=1):
    """One markdown row per system: `label` (the leading columns), the system, `cells(result)`
    (a string of `n_cells` columns), then the `reference` system's seconds over this one's
    (`digits` decimals); a failed system's row carries its error. Returns the same rows as
    dicts for the result file (`_results.write`): label, system, the result's numbers and
    `speedup`, the reference's seconds over this system's."""
    base = rows.get(reference, {}).get(seconds_key)
    out = []
    for system, r in rows.items():
        if "error" in r:
            print(f"| {label} | {system} | error: {r['error']} |" + " |" * n_cells, flush=True)
            out.append({"set": label, "system": system, "error": r["error"]})
            continue
        ratio = f"{base / r[seconds_key]:.{digits}f}x" if base else "–"
        print(f"| {label} | {system} | {cells(r)} | {ratio} |", flush=True)
        out.append({"set": label, "system": system, **{k: v for k, v in r.items() if k != "runs"},
                    "speedup": base / r[seconds_key] if base else None})
    return out


def best_of_rounds(measure, systems, repeat, key="seconds"):
    """`measure(system)` for each system, `repeat` rounds in alternating order (forward, then
    backward), so that no system always runs first on memory that no process has touched yet
    (on this virtual machine such memory costs up to ~2 s per GB to fault in, once). Keeps each
    system's fastest result, with every round's `key` in its "runs"."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    best, runs = {}, {system: [] for system in systems}
    for round_ in range(repeat):
        for system in systems if round_ % 2 == 0 else systems[::-1]:
            result = measure(system)
            if key in result:
                runs[system].append(result[key])
            if system not in best or key not in best[system] or result.get(key, float("inf")) < best[system][key]:
                best[system] = result
    return {system: {**best[system], "runs": runs[system]} for system in systems}


def print_runs(results, key="seconds", digits=2):
    """One comment line with every round's `key` per system (see `best_of_rounds`)."""
    print("# runs, s: " + "; ".join(f"{system} " + ", ".join(f"{t:.{digits}f}" for t in r["runs"])
                                      for system, r in results.items() if r.get("runs")), flush=True)
