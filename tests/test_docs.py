"""The documentation's generated parts: benchmark pages drawn from the scripts' result files,
docstrings read as plain text, and no citation of private notes left in the sources."""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _results  # noqa: E402
import benchmark_pages  # noqa: E402
from plain_docstrings import plain_line, plain_lines  # noqa: E402

SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name not in benchmark_pages.SCRIPTS_SKIPPED)


def test_no_citation_of_private_notes_is_left():
    pattern = re.compile(r"\bseeds?\s+\d{3}\b|\bseeds'|\bthe seed's\b", re.I)
    files = [ROOT / "README.md", *(ROOT / "src").rglob("*.py"), *(ROOT / "examples").glob("*.py"),
             *(ROOT / "docs").rglob("*.rst"), *(ROOT / "docs").glob("*.py")]
    found = [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in files if "auto_examples" not in f.parts
             for m in pattern.finditer(f.read_text())]
    assert found == []


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_every_benchmark_script_writes_its_result_file(script):
    assert re.search(rf'\bwrite\(\s*"{script.stem}"', script.read_text())


def test_a_result_file_becomes_a_page_with_its_table_and_plot(tmp_path, monkeypatch):
    monkeypatch.setattr(_results, "RESULTS", tmp_path / "results")
    rows = [{"n": n, "system": s, "fit": t} for s, k in (("a", 1e-6), ("b", 2e-6)) for n in (1000, 2000)
            for t in [k * n ** 2]]
    path = _results.write("bench_toy", rows, command="python benchmarks/bench_toy.py --sizes 1000,2000",
                          plots=[{"kind": "lines", "x": "n", "y": "fit", "series": "system"}])
    saved = json.loads(path.read_text())
    assert saved["rows"] == rows and saved["machine"]["cores"] and saved["date"]
    (tmp_path / "bench_toy.py").write_text('"""Time the toy |x| model_ fits."""\n')
    out = tmp_path / "pages"
    assert benchmark_pages.write_pages(tmp_path, tmp_path / "results", out) == ["bench_toy"]
    page = (out / "bench_toy.rst").read_text()
    assert (out / "bench_toy.png").stat().st_size > 0 and ".. image:: bench_toy.png" in page
    assert "python benchmarks/bench_toy.py --sizes 1000,2000" in page
    assert "Time the toy \\|x\\| model\\_ fits." in page
    assert page.endswith("   * - 2000\n     - b\n     - 8\n")  # b's fit at n = 2000: 2e-6 · 2000²


def test_a_script_without_a_result_file_gets_a_page_that_says_so(tmp_path):
    (tmp_path / "bench_none.py").write_text('"""Time nothing yet."""\n')
    benchmark_pages.write_pages(tmp_path, tmp_path / "results", tmp_path / "pages")
    page = (tmp_path / "pages" / "bench_none.rst").read_text()
    assert "No result file yet" in page and ".. image::" not in page


def test_docstrings_read_as_plain_text_outside_code():
    assert plain_line("|y − f| ≤ ε for α* and `dual_coef_`") == "\\|y − f\\| ≤ ε for α\\* and ``dual_coef_``"
    assert plain_lines([">>> abs(-1) | 0", "1", "", "support_ : ndarray"]) == [
        ">>> abs(-1) | 0", "1", "", "support\\_ : ndarray"]
