"""svm-scale's range files (`-s` writes one, `-r` reads one back): the scaling limits, an
optional target section, and each non-constant feature's training min and max."""

from __future__ import annotations

from svmkit.io.atomic import atomic_write
from svmkit.exceptions import DataFormatError


def _g16(value: float) -> str:
    """svm-scale's `%.16g`, widened to `%.17g` where 16 digits would not read back exactly."""
    text = f"{value:.16g}"
    return text if float(text) == value else f"{value:.17g}"


def write_range(path, limits, feature_min, feature_max, y=None) -> None:
    """Write a range file: optional `y` section (`y` = (y_lower, y_upper, y_min, y_max): the
    limits, then min and max), `x`, the `limits` (lower, upper), then `index min max` (1-based)
    for each feature whose min and max differ; numbers as svm-scale's `%.16g`, with a 17th
    digit only where needed to read back exactly."""
    lines = []
    if y is not None:
        lines += ["y", f"{_g16(y[0])} {_g16(y[1])}", f"{_g16(y[2])} {_g16(y[3])}"]
    lines += ["x", f"{_g16(limits[0])} {_g16(limits[1])}"]
    lines += [f"{j + 1} {_g16(lo)} {_g16(hi)}"
              for j, (lo, hi) in enumerate(zip(list(feature_min), list(feature_max))) if lo != hi]
    with atomic_write(path) as f:
        f.writelines(line + "\n" for line in lines)


def _bad_line(path, n, what, words):
    got = repr(" ".join(words)) if words else "the end of the file"
    raise DataFormatError(f"{path}, line {n}: expected {what}, got {got}")


def read_range(path):
    """Parse svm-scale's range file into (y_lower, y_upper, y_min, y_max) or None,
    (lower, upper) and rows [line, index, min, max]; DataFormatError names file and line."""
    with open(path) as f:
        lines = [(n, line.split()) for n, line in enumerate(f, 1) if line.strip()]
    end = (lines[-1][0] + 1 if lines else 1, [])

    def fields(k, what, kinds=(float, float)):
        n, words = lines[k] if k < len(lines) else end
        try:
            if len(words) == len(kinds):
                return [n] + [kind(word) for kind, word in zip(kinds, words)]
        except ValueError:
            pass
        _bad_line(path, n, what, words)

    has_y = bool(lines) and lines[0][1] == ["y"]
    y_section = fields(1, "'y_lower y_upper'")[1:] + fields(2, "'y_min y_max'")[1:] if has_y else None
    k = 3 if has_y else 0
    n, words = lines[k] if k < len(lines) else end
    if words != ["x"]:
        _bad_line(path, n, "the section header 'x'", words)
    limits = fields(k + 1, "'lower upper'")[1:]
    rows = [fields(j, "'index min max'", (int, float, float)) for j in range(k + 2, len(lines))]
    prev = 0
    for n, index, _, _ in rows:
        if index <= prev:
            raise DataFormatError(f"{path}, line {n}: feature index {index} does not exceed the previous "
                                  f"index {prev} (indices must be positive and ascending)")
        prev = index
    return y_section, limits, rows
