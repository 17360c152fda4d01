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


def print_rows(label, rows, seconds_key, cells, n_cells, reference="scikit-learn", digits=1):
    """One markdown row per system: `label` (the leading columns), the system, `cells(result)`
    (a string of `n_cells` columns), then the `reference` system's seconds over this one's
    (`digits` decimals); a failed system's row carries its error."""
    base = rows.get(reference, {}).get(seconds_key)
    for system, r in rows.items():
        if "error" in r:
            print(f"| {label} | {system} | error: {r['error']} |" + " |" * n_cells, flush=True)
            continue
        ratio = f"{base / r[seconds_key]:.{digits}f}x" if base else "–"
        print(f"| {label} | {system} | {cells(r)} | {ratio} |", flush=True)
