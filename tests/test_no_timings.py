"""No docstring or comment in src/ gives a timing or a measured speed: they say why the code is as
it is, and measurements belong in the benchmarks' result files (issue 54)."""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: A number (1,024 or 0.62, not part of a name such as float32), then what makes it a timing.
_NUMBER = r"(?<![\w.^])\d+(?:[.,]\d+)*"
TIMING = re.compile("|".join([
    # a duration: "6.6 s", "0.62 s so", "30 ms", "225 ns", "10 seconds" (not "2 s.d." nor "2 s_y")
    _NUMBER + r"\s?(?:s|ms|µs|μs|us|ns|sec|secs|seconds?|minutes?|mins?|hours?|h)(?![\w.])",
    _NUMBER + r"\s?(?:s|ms|µs|μs|us|ns|sec|secs)\.(?!\w)",
    # a speed ratio: "10x slower", "1.6× slower", "3 times faster", "14 % less time"
    _NUMBER + r"\s?(?:[×x]|times|%)\s+(?:faster|slower|quicker|less time|more time|of the time|speed)",
    r"\bspeed-?ups? of\s+" + _NUMBER,
    # a throughput: "95 GFLOPS", "GFLOP/s", "12 GB/s"
    r"\b[KMGT]FLOP(?:S|/s)\b",
    r"\b[KMGT]i?B/s\b",
]))


def _python_texts(path: Path):
    """(line, text) of every docstring (any string statement) and comment of a Python file."""
    source = path.read_text()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            yield node.lineno, node.value.value
    comments = [(token.start[0], token.string) for token in tokenize.generate_tokens(io.StringIO(source).readline)
                if token.type == tokenize.COMMENT]
    # a comment on consecutive lines reads as one
    while comments:
        first, text = comments.pop(0)
        last = first
        while comments and comments[0][0] == last + 1:
            last, more = comments.pop(0)
            text += "\n" + more
        yield first, text


#: A C++ comment, or a string or character literal (skipped, so that "//" inside one is no comment).
_CPP_PIECE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _cpp_texts(path: Path):
    """(line, text) of every // and /* */ comment of a C++ file."""
    source = path.read_text()
    for match in _CPP_PIECE.finditer(source):
        if match.group().startswith("/"):
            yield source.count("\n", 0, match.start()) + 1, match.group()


def _texts():
    for path in sorted(SRC.rglob("*")):
        if path.suffix == ".py":
            yield path, _python_texts(path)
        elif path.suffix in (".cpp", ".hpp", ".h", ".cu", ".cuh"):
            yield path, _cpp_texts(path)


def _timings(text: str):
    # a comment or docstring wrapped over lines reads as one: "0.62\n s" is still a timing
    return [m.group() for m in TIMING.finditer(re.sub(r"\s*\n\s*(?:#:?|//|\*)?\s*", " ", text))]


@pytest.mark.parametrize("text", [
    "took 6.6 s", "0.62 s so", "a 10x slower predict on 2 cores", "1.6× slower on a9a", "30 ms a solve",
    "4.2 → 3.0 ms for", "225 ns a visit", "0.1 s.", "12 against 95 GFLOPS", "at 20 GB/s", "(~0.1 ms)",
    "14 % less time", "3 times faster", "a speed-up of 2", "10–14 s in\n    # turn", "1 hour", "90 seconds",
])
def test_pattern_finds_timings(text):
    assert _timings(text)


@pytest.mark.parametrize("text", [
    "2 s.d. of the scores", "x_s", "128 × 1,024 tiles", "2^22 values", "float32 s", "(m, s) with (v − m)/s",
    "the seconds it took", "CONNECT_TIMEOUT seconds", "5 λ × 5 γ", "at least 99 % distance", "2 s_y",
    "LIBLINEAR 2.4x–2.50", "runs faster than spftrs", "Most passes any problem took.", "-s 11",
])
def test_pattern_passes_sizes(text):
    assert not _timings(text)


def test_no_timing_in_docstrings_or_comments():
    found = [f"{path.relative_to(SRC.parent)}:{line}: {hit}"
             for path, texts in _texts() for line, text in texts for hit in _timings(text)]
    assert not found, "timings in docstrings or comments (put them in benchmark results):\n" + "\n".join(found)
