"""One measurement per fresh process, so that each system's memory and first-call costs are its
own: the benchmark script runs itself with `--worker …` and prints one JSON line."""

from __future__ import annotations

import json
import subprocess
import sys


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


def print_rows(name, rows, seconds_key, cells, n_cells):
    """One markdown row per system of set `name`: the system, `cells(result)` (a string of
    `n_cells` columns), then scikit-learn's seconds over the system's; a failed system's row
    carries its error."""
    base = rows.get("scikit-learn", {}).get(seconds_key)
    for system, r in rows.items():
        if "error" in r:
            print(f"| {name} | {system} | error: {r['error']} |" + " |" * n_cells, flush=True)
            continue
        ratio = f"{base / r[seconds_key]:.1f}x" if base else "–"
        print(f"| {name} | {system} | {cells(r)} | {ratio} |", flush=True)
