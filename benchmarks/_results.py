"""The one writer of benchmark results: benchmarks/results/NAME.json, which the documentation's
benchmark pages render (table and plot) at build time.

A result holds the rows the script printed (one dict per measurement), the command that ran
it, the machine and the date, and how to plot it: `lines` (y against x per series on log axes,
e.g. time against N per system) or `bars` (one bar per row, e.g. a ratio with a reference line).
"""

from __future__ import annotations

import json
import math
import os
import platform
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    """CPU model, cores, memory, the 1-minute load average when the result is written (other work
    on the machine slows every system) and the system, as the pages print them."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = None
    try:
        memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    load = round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": memory, "load_average": load,
            "system": f"{platform.system()} {platform.release()}", "python": platform.python_version()}


def _plain(value):
    """JSON-safe: NumPy scalars to Python numbers, NaN and infinities to None."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def write(name: str, rows: list[dict], *, plots: list[dict] | None = None, columns: list[str] | None = None,
          notes: str = "", command: str | None = None, machine_info: dict | None = None,
          date: str | None = None) -> Path:
    """Write benchmarks/results/NAME.json and return its path.

    `command` defaults to this process's command line, `machine_info` to `machine()`, `date` to
    now (UTC, ISO 8601). Each plot is {"kind": "lines", "x", "y", "series"?, "where"?} or
    {"kind": "bars", "label": [columns], "value", "reference"?, "where"?}.
    """
    RESULTS.mkdir(exist_ok=True)
    if command is None:
        script = Path(sys.argv[0])
        shown = f"benchmarks/{script.name}" if script.parent.name == "benchmarks" else sys.argv[0]
        command = " ".join(["python", shown] + [shlex.quote(a) for a in sys.argv[1:]])
    result = {"name": name, "command": command, "machine": machine_info or machine(),
              "date": date or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "notes": notes, "columns": columns, "plots": plots or [], "rows": _plain(rows)}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return path
