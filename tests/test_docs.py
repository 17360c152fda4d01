"""The documentation's generated parts: benchmark pages drawn from the scripts' result files,
docstrings read as plain text, no citation of private notes left in the sources, and built
pages that load nothing from the network."""

import json
import re
import sys
from html.parser import HTMLParser
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


def test_a_script_without_a_result_file_gets_a_page_that_says_why_and_the_command(tmp_path):
    (tmp_path / "bench_none.py").write_text('"""Time nothing yet."""\n')
    (tmp_path / "bench_cuda.py").write_text('"""Time the GPU.\n\n    python benchmarks/bench_cuda.py [--sets a,b]\n'
                                            '                                    [--timeout S]\n\n'
                                            'Needs a CUDA device and CuPy (the `gpu` extra)."""\n')
    benchmark_pages.write_pages(tmp_path, tmp_path / "results", tmp_path / "pages")
    page = (tmp_path / "pages" / "bench_none.rst").read_text()
    assert "No result is recorded yet" in page and "no run of it has been recorded" in page
    assert "      python benchmarks/bench_none.py" in page and ".. image::" not in page
    page = (tmp_path / "pages" / "bench_cuda.rst").read_text()
    assert "it needs a CUDA device" in page
    assert "      python benchmarks/bench_cuda.py [--sets a,b]\n" + " " * 38 + "[--timeout S]\n" in page


def test_a_peer_that_was_not_installed_is_named_once_as_absent_not_as_error_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(_results, "RESULTS", tmp_path / "results")
    missing = "ModuleNotFoundError: No module named 'liquidSVM'"
    rows = [row for s in ("set1", "set2") for row in (
        {"set": s, "system": "svmkit", "seconds": 1.0}, {"set": s, "system": "scikit-learn", "error": "over 60 s"},
        {"set": s, "system": "liquidSVM-grid", "error": missing},
        {"set": s, "system": "liquidSVM-default", "error": missing})]
    _results.write("bench_toy", rows, command="python benchmarks/bench_toy.py")
    (tmp_path / "bench_toy.py").write_text('"""Time a toy search."""\n')
    benchmark_pages.write_pages(tmp_path, tmp_path / "results", tmp_path / "pages")
    page = (tmp_path / "pages" / "bench_toy.rst").read_text()
    assert page.count("liquidSVM") == 1 + 2  # the module once, with the two systems it would have run
    assert "not measured: liquidSVM (systems liquidSVM-grid, liquidSVM-default)." in page
    assert "ModuleNotFoundError" not in page and page.count("over 60 s") == 2  # a real failure stays


def test_the_summary_gives_each_peers_seconds_over_svmkits_from_the_result_files(tmp_path, monkeypatch):
    monkeypatch.setattr(_results, "RESULTS", tmp_path / "results")
    rows = [{"set": s, "system": system, "fit": t, "predict": 1.0} for s, k in (("a", 1.0), ("b", 3.0), ("c", 5.0))
            for system, t in (("svmkit", 2.0), ("scikit-learn", 2.0 * k), ("libsvm", 4.0))]
    rows.append({"set": "d", "system": "scikit-learn", "fit": 9.0})  # no svmkit row: not a case
    _results.write("bench_svc", rows, command="python benchmarks/bench_svc.py", date="2026-01-02 03:04 UTC")
    text = "\n".join(benchmark_pages.summary(tmp_path / "results"))
    assert "   * - :ref:`SMO fit <bench-bench_svc>`\n     - scikit-learn\n     - 3×\n     - 1× – 5×\n     - 3\n" in text
    assert "   * - :ref:`SMO fit <bench-bench_svc>`\n     - libsvm\n     - 2×\n     - 2× – 2×\n     - 3\n" in text
    assert benchmark_pages.summary(tmp_path / "none") == ["No result file holds a comparison with a peer yet."]


class _Loads(HTMLParser):
    """What a page fetches when it is opened: scripts, stylesheets, preloads, images, frames."""

    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and set((attrs.get("rel") or "").split()) & {"stylesheet", "preload", "modulepreload", "icon"}:
            self.urls.append(attrs.get("href") or "")
        elif tag in ("script", "img", "iframe", "source", "embed", "audio", "video"):
            self.urls.append(attrs.get("src") or "")


def network_loads(html: str) -> list[str]:
    parser = _Loads()
    parser.feed(html)
    found = [u for u in parser.urls if re.match(r"\s*(https?:)?//", u)]
    return found + re.findall(r"(?:url\(|@import)\s*['\"]?((?:https?:)?//[^'\")\s]+)", html)


def test_the_network_check_finds_a_cdn_script_a_stylesheet_and_a_font():
    page = ('<script src="https://cdn.example/mathjax.js"></script><script src="_static/x.js"></script>'
            '<link rel="stylesheet" href="//fonts.example/css"><a href="https://www.sphinx-doc.org/">Sphinx</a>'
            '<style>@font-face { src: url("https://fonts.example/a.woff2") }</style>')
    assert network_loads(page) == ["https://cdn.example/mathjax.js", "//fonts.example/css", "https://fonts.example/a.woff2"]


def test_no_built_page_loads_a_script_or_stylesheet_from_the_network():
    built = ROOT / "build" / "docs"
    if not (built / "index.html").exists():
        pytest.skip("the documentation is not built (make docs; .ci/run runs this file again after it)")
    found = {str(f.relative_to(built)): loads for f in [*built.rglob("*.html"), *built.rglob("*.css")]
             if (loads := network_loads(f.read_text(errors="replace")))}
    assert found == {}
    assert (built / "_static" / "mathjax" / "tex-chtml-full.js").exists()
    assert 'src="../_static/mathjax/tex-chtml-full.js"' in (built / "guide" / "svc.html").read_text()


def test_docstrings_read_as_plain_text_outside_code():
    assert plain_line("|y − f| ≤ ε for α* and `dual_coef_`") == "\\|y − f\\| ≤ ε for α\\* and ``dual_coef_``"
    assert plain_lines([">>> abs(-1) | 0", "1", "", "support_ : ndarray"]) == [
        ">>> abs(-1) | 0", "1", "", "support\\_ : ndarray"]
