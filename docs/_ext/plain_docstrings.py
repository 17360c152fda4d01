"""Read svmkit's docstrings as the plain text they are written in.

The docstrings follow numpydoc's sections but write formulas in plain Unicode: |x| for an
absolute value, α* for a dual variable, `name_` for a fitted attribute. reStructuredText reads
those as substitutions, emphasis and link targets. Before numpydoc parses a docstring, this
escapes them outside code (`…` and ``…`` spans become literals; doctest and literal blocks are
left as they are), so that any docstring renders as written and the build stays free of warnings.
"""

from __future__ import annotations

import re

_CODE = re.compile(r"(``.+?``|`[^`]+`)")
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=\W|$)")
_LONE_STAR = re.compile(r"(?<!\*)\*(?!\*)")


def _plain(text: str) -> str:
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    text = _TRAILING_UNDERSCORE.sub(r"\\_", text)
    return _LONE_STAR.sub(r"\\*", text)


def _code(span: str) -> str:
    inner = span.strip("`")
    if not inner.strip():
        return _plain(span)
    return f"``{inner.strip()}``"


def plain_line(line: str) -> str:
    parts = _CODE.split(line)
    return "".join(_code(p) if i % 2 else _plain(p) for i, p in enumerate(parts))


def plain_lines(lines: list[str]) -> list[str]:
    out, literal_indent, in_doctest = [], None, False
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if in_doctest and not stripped:
            in_doctest = False
        if stripped.startswith(">>>"):
            in_doctest = True
        if literal_indent is not None and stripped and indent <= literal_indent:
            literal_indent = None
        if in_doctest or (literal_indent is not None and stripped):
            out.append(line)
            continue
        out.append(plain_line(line))
        if stripped.endswith("::"):
            literal_indent = indent
    return out


def _process(app, what, name, obj, options, lines):
    lines[:] = plain_lines(lines)


def setup(app):
    app.connect("autodoc-process-docstring", _process, priority=400)
    return {"version": "1", "parallel_read_safe": True}
