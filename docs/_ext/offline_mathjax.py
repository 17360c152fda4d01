"""MathJax served from the built pages, so that formulas render without a network.

`make docs` installs the npm registry's `mathjax` package (version pinned in the Makefile) into
build/mathjax/; this extension copies the parts the pages use into _static/mathjax/: the
combined TeX-to-CommonHTML component with every TeX extension (nothing is autoloaded), its
fonts, and the menu's accessibility components, which it loads on demand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.errors import ExtensionError

SCRIPT = "tex-chtml-full.js"
PARTS = [SCRIPT, "output/chtml/fonts/woff-v2", "ui", "a11y", "sre"]


def _check(app):
    source = Path(app.config.mathjax_source)
    if app.builder.format == "html" and not (source / SCRIPT).is_file():
        raise ExtensionError(f"MathJax is not at {source}: run `make docs`, which installs it with "
                             "`npm install --prefix build/mathjax mathjax@3`")


def _copy(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    source, target = Path(app.config.mathjax_source), Path(app.outdir) / "_static" / "mathjax"
    for part in PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, dirs_exist_ok=True)
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)


def setup(app):
    app.add_config_value("mathjax_source", "", "env")
    app.connect("builder-inited", _check)
    app.connect("build-finished", _copy)
    return {"version": "1", "parallel_read_safe": True}
