"""Benchmark pages drawn from the benchmark scripts' result files.

Every benchmarks/bench_*.py (and the other measuring scripts there) writes
benchmarks/results/NAME.json through benchmarks/_results.py. At build time this extension
writes one page per script into docs/benchmarks/generated/: what the script measures (its
docstring's first paragraph), the date, machine and command of the run, the table of its rows
and the plot its result file asks for (time against N per system on log axes, or ratio bars).
A script without a result file gets a page that says so. Nothing on these pages is typed by hand.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

from plain_docstrings import plain_line, plain_lines

SCRIPTS_SKIPPED = {"_results.py", "workers.py"}


def _first_paragraph(script: Path) -> str:
    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    return "\n".join(plain_lines(doc.strip().split("\n\n")[0].splitlines()))


def _text(value) -> str:
    """A value as the table and the plot labels show it."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if value == 0 or 1e-3 <= abs(value) < 1e6:
            return f"{value:.4g}"
        return f"{value:.3e}"
    return str(value).replace("\n", " ")


def _cell(value) -> str:
    return plain_line(_text(value))


def _table(rows: list[dict], columns: list[str]) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", "   :class: benchmark-table", ""]
    for i, row in enumerate([{c: c for c in columns}] + rows):
        for j, column in enumerate(columns):
            text = _cell(row.get(column)) if i else plain_line(column)
            lines.append(("   * - " if j == 0 else "     - ") + (text or "—"))
    return lines


def _numbers(rows, key):
    return [r.get(key) for r in rows if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]


def _plot_lines(rows, spec, ax):
    """y against x, one line per series, on log axes (time against N per system)."""
    x, y, series = spec["x"], spec["y"], spec.get("series")
    groups = {}
    for row in rows:
        if isinstance(row.get(x), (int, float)) and isinstance(row.get(y), (int, float)) and row[y] > 0:
            groups.setdefault(row.get(series, y) if series else y, []).append((row[x], row[y]))
    for label, points in groups.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], "o-", label=str(label))
    ax.set_xscale(spec.get("xscale", "log"))
    ax.set_yscale(spec.get("yscale", "log"))
    ax.set_xlabel(spec.get("xlabel", x))
    ax.set_ylabel(spec.get("ylabel", y))
    if len(groups) > 1:
        ax.legend(fontsize="small")
    return bool(groups)


def _plot_bars(rows, spec, ax):
    """One horizontal bar per row: a ratio (or time) with its label; a line at the reference."""
    value = spec["value"]
    labels, values = [], []
    for row in rows:
        v = row.get(value)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            labels.append(" / ".join(_text(row.get(k)) for k in spec["label"]))
            values.append(v)
    ax.barh(range(len(values)), values, color="tab:blue")
    ax.set_yticks(range(len(values)), labels, fontsize="x-small" if len(values) > 12 else "small")
    ax.invert_yaxis()
    if "reference" in spec:
        ax.axvline(spec["reference"], color="k", lw=0.8)
    if spec.get("xscale"):
        ax.set_xscale(spec["xscale"])
    ax.set_xlabel(spec.get("xlabel", value))
    return bool(values)


def _figure(result: dict, path: Path) -> bool:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = result.get("plots") or []
    rows = result["rows"]
    drawn = False
    if not specs:
        return False
    fig, axes = plt.subplots(1, len(specs), figsize=(6.0 * len(specs), max(3.5, 0.28 * len(rows) + 1.0)),
                             squeeze=False)
    for spec, ax in zip(specs, axes[0]):
        part = [r for r in rows if all(r.get(k) == v for k, v in spec.get("where", {}).items())]
        drawn |= (_plot_lines if spec["kind"] == "lines" else _plot_bars)(part, spec, ax)
        if spec.get("title"):
            ax.set_title(spec["title"], fontsize="medium")
    fig.tight_layout()
    if drawn:
        fig.savefig(path, dpi=90)
    plt.close(fig)
    return drawn


def _page(script: Path, result_file: Path, out: Path) -> list[str]:
    name = script.stem
    title = f"``{script.name}``"
    lines = [f".. _bench-{name}:", "", title, "=" * len(title), "", _first_paragraph(script), ""]
    if not result_file.exists():
        return lines + [".. note::", "",
                        f"   No result file yet: ``benchmarks/results/{name}.json`` is written by a run of",
                        f"   ``python benchmarks/{script.name}`` with its usual arguments.", ""]
    result = json.loads(result_file.read_text())
    machine = result.get("machine", {})
    lines += [f":Date: {result['date']}",
              f":Machine: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
              f"{machine.get('memory_gb', '?')} GB; {machine.get('system', '')}; Python {machine.get('python', '')}"
              + (f"; load average {machine['load_average']} at the end of the run"
                 if machine.get("load_average") is not None else ""),
              f":Command: ``{result['command']}``",
              f":Result file: ``benchmarks/results/{result_file.name}``", ""]
    if result.get("notes"):
        lines += plain_lines(result["notes"].splitlines()) + [""]
    image = out / f"{name}.png"
    if _figure(result, image):
        lines += [f".. image:: {image.name}", f"   :alt: {name}", ""]
    columns = result.get("columns") or list(dict.fromkeys(k for r in result["rows"] for k in r))
    return lines + _table(result["rows"], columns) + [""]


def write_pages(scripts: Path, results: Path, out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for script in sorted(scripts.glob("*.py")):
        if script.name in SCRIPTS_SKIPPED:
            continue
        text = "\n".join(_page(script, results / f"{script.stem}.json", out))
        target = out / f"{script.stem}.rst"
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
        names.append(script.stem)
    return names


def _builder_inited(app):
    write_pages(Path(app.config.benchmark_scripts), Path(app.config.benchmark_results),
                Path(app.srcdir) / "benchmarks" / "generated")


def setup(app):
    app.add_config_value("benchmark_scripts", "", "env")
    app.add_config_value("benchmark_results", "", "env")
    app.connect("builder-inited", _builder_inited)
    return {"version": "1", "parallel_read_safe": True}
