"""Benchmark pages drawn from the benchmark scripts' result files.

Every benchmarks/bench_*.py (and the other measuring scripts there) writes
benchmarks/results/NAME.json through benchmarks/_results.py. At build time this extension
writes one page per script into docs/benchmarks/generated/: what the script measures (its
docstring's first paragraph), the date, machine and command of the run, the table of its rows
and the plot its result file asks for (time against N per system on log axes, or ratio bars).
A script without a result file gets a page that says so, why, and the command that writes it.
Rows of a peer that was not installed when the script ran are left out and the peer is named
once as absent. The benchmarks index includes generated/summary.inc: svmkit's headline ratios
against each peer (HEADLINES), computed from the result files. Nothing here is typed by hand.
"""

from __future__ import annotations

import ast
import json
import math
import re
import statistics
from pathlib import Path

from plain_docstrings import plain_line, plain_lines

SCRIPTS_SKIPPED = {"_results.py", "workers.py"}

#: Why a script may have no result file, where its docstring does not say (a script whose
#: docstring says it needs a CUDA device is explained from that).
NO_RESULT_WHY = {
    "bench_scaling": "a full run fits every size up to 1,000,000 rows for each system, each fit "
                     "allowed up to --limit seconds: hours on the 2-core machine that records the results",
}

#: The benchmarks index's summary: per result file, the seconds compared, the column naming the
#: system, svmkit's own system, the peers, and the columns that tell one case from another. Each
#: row of the summary is a peer's seconds over svmkit's, over the cases both measured.
HEADLINES = [
    {"name": "bench_svc", "what": "SMO fit", "seconds": "fit", "ours": "svmkit", "case": ["set"],
     "peers": ["scikit-learn", "libsvm", "sklearn-intelex", "thundersvm-cpu"]},
    {"name": "bench_svc", "what": "SMO predict", "seconds": "predict", "ours": "svmkit", "case": ["set"],
     "peers": ["scikit-learn", "libsvm", "sklearn-intelex", "thundersvm-cpu"]},
    {"name": "bench_grid", "what": "(C, γ) grid search", "seconds": "seconds", "ours": "svmkit", "case": ["set"],
     "peers": ["scikit-learn", "sklearn-intelex", "liquidSVM-grid"]},
    {"name": "bench_small", "what": "110 single fits of a grid", "seconds": "total fit s", "ours": "svmkit",
     "case": ["set"], "peers": ["libsvm", "scikit-learn"]},
    {"name": "bench_linear", "what": "linear SVM fit", "seconds": "seconds", "ours": "svmkit",
     "case": ["set", "variant"], "peers": ["liblinear", "scikit-learn"]},
    {"name": "bench_ridge", "what": "kernel ridge fit and LOO search", "seconds": "seconds", "ours": "svmkit",
     "case": ["part", "N"], "peers": ["scikit-learn"]},
    {"name": "bench_proba", "what": "SVC with probabilities, fit", "seconds": "seconds",
     "ours": "svmkit SVC(probability)", "case": ["set"], "peers": ["scikit-learn SVC(probability)"]},
    {"name": "bench_classes", "what": "many classes, fit", "seconds": "seconds", "ours": "svmkit", "case": ["set"],
     "peers": ["scikit-learn"]},
    {"name": "bench_classes", "what": "many classes, predict", "seconds": "predict_s", "ours": "svmkit",
     "case": ["set"], "peers": ["scikit-learn"]},
]

_ABSENT = re.compile(r"(ModuleNotFoundError|ImportError): No module named '([\w.]+)'")


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


def _usage(script: Path) -> list[str]:
    """The docstring's first indented block (the command and its arguments), else the bare command."""
    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    block = re.search(r"\n\n((?:    .*\S.*\n?)+)", doc)
    if block and script.name in block.group(1):
        return [line[4:].rstrip() for line in block.group(1).rstrip().splitlines()]
    return [f"python benchmarks/{script.name}"]


def _no_result(script: Path) -> list[str]:
    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    if "Needs a CUDA device" in doc:
        why = "it needs a CUDA device and CuPy (the ``gpu`` extra), and the machine that records the results has none"
    else:
        why = NO_RESULT_WHY.get(script.stem, "no run of it has been recorded")
    return ([".. note::", "",
             f"   No result is recorded yet (``benchmarks/results/{script.stem}.json`` does not exist): {why}.",
             "   Run from the repository root, this writes it:", "", "   .. code-block:: sh", ""]
            + [f"      {line}" for line in _usage(script)] + [""])


def _absent_peers(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """The rows less those of peers that were not installed, and one line per missing module."""
    kept, absent = [], {}
    for row in rows:
        found = _ABSENT.search(str(row.get("error", "")))
        if found:
            absent.setdefault(found.group(2), []).append(str(row.get("system", "?")))
        else:
            kept.append(row)
    return kept, [f"{module} (system{'s' if len(set(systems)) > 1 else ''} "
                  f"{', '.join(dict.fromkeys(systems))})" for module, systems in absent.items()]


def _page(script: Path, result_file: Path, out: Path) -> list[str]:
    name = script.stem
    title = f"``{script.name}``"
    lines = [f".. _bench-{name}:", "", title, "=" * len(title), "", _first_paragraph(script), ""]
    if not result_file.exists():
        return lines + _no_result(script)
    result = json.loads(result_file.read_text())
    result["rows"], absent = _absent_peers(result["rows"])
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
    if absent:
        lines += [plain_line("Not installed when this ran, so not measured: " + "; ".join(absent) + "."), ""]
    image = out / f"{name}.png"
    if _figure(result, image):
        lines += [f".. image:: {image.name}", f"   :alt: {name}", ""]
    columns = result.get("columns") or list(dict.fromkeys(k for r in result["rows"] for k in r))
    columns = [c for c in columns if any(r.get(c) is not None for r in result["rows"])]
    return lines + _table(result["rows"], columns) + [""]


def _ratios(result: dict, spec: dict) -> dict[str, list[float]]:
    """Per peer, its seconds over svmkit's in every case both measured."""
    seconds = {}
    for row in result["rows"]:
        value = row.get(spec["seconds"])
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 and "error" not in row:
            seconds[(tuple(row.get(k) for k in spec["case"]), row.get("system"))] = value
    ratios = {}
    for (case, system), value in seconds.items():
        if system in spec["peers"] and (case, spec["ours"]) in seconds:
            ratios.setdefault(system, []).append(value / seconds[(case, spec["ours"])])
    return ratios


def _times(value: float) -> str:
    return f"{value:.2g}×" if value < 100 else f"{value:.0f}×"


def summary(results: Path) -> list[str]:
    """The benchmarks index's table: svmkit's headline ratios against each peer, from the result files."""
    rows = []
    for spec in HEADLINES:
        result_file = results / f"{spec['name']}.json"
        if not result_file.exists():
            continue
        ratios = _ratios(json.loads(result_file.read_text()), spec)
        for peer in spec["peers"]:
            if peer in ratios:
                values = ratios[peer]
                rows.append([f":ref:`{spec['what']} <bench-{spec['name']}>`", plain_line(peer),
                             _times(statistics.median(values)), f"{_times(min(values))} – {_times(max(values))}",
                             str(len(values))])
    if not rows:
        return ["No result file holds a comparison with a peer yet."]
    lines = [".. list-table::", "   :header-rows: 1", "   :class: benchmark-table", ""]
    for row in [["measure", "peer", "median", "range", "cases"]] + rows:
        lines += [("   * - " if j == 0 else "     - ") + text for j, text in enumerate(row)]
    return lines + [""]


def write_pages(scripts: Path, results: Path, out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for script in sorted(scripts.glob("*.py")):
        if script.name in SCRIPTS_SKIPPED:
            continue
        _write_if_changed(out / f"{script.stem}.rst", "\n".join(_page(script, results / f"{script.stem}.json", out)))
        names.append(script.stem)
    _write_if_changed(out / "summary.inc", "\n".join(summary(results)))
    return names


def _write_if_changed(target: Path, text: str) -> None:
    if not target.exists() or target.read_text() != text:
        target.write_text(text)


def _builder_inited(app):
    write_pages(Path(app.config.benchmark_scripts), Path(app.config.benchmark_results),
                Path(app.srcdir) / "benchmarks" / "generated")


def setup(app):
    app.add_config_value("benchmark_scripts", "", "env")
    app.add_config_value("benchmark_results", "", "env")
    app.connect("builder-inited", _builder_inited)
    return {"version": "1", "parallel_read_safe": True}
