"""Sphinx configuration of svmkit's documentation: `make docs` builds it into build/docs."""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "src"))  # the tree's own svmkit, also when it is not installed
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import svmkit  # noqa: E402

project = "svmkit"
author = "the svmkit developers"
copyright = "the svmkit developers"
release = svmkit.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "benchmark_pages",
    "plain_docstrings",
    "offline_mathjax",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb", "auto_examples/*.py.md5",
                    "auto_examples/*.codeobj.json", "auto_examples/*.zip"]
templates_path = []
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
smartquotes = False  # parameter values such as 'rbf' keep their straight quotes

# numpydoc renders the Parameters / Attributes / Examples sections; the classes' members are
# listed by autodoc, not by a numpydoc table of stubs.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"

html_theme = "pydata_sphinx_theme"
html_title = f"svmkit {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []

# MathJax from the npm registry's `mathjax` package, installed by `make docs` into build/mathjax
# and copied into _static/mathjax (offline_mathjax): no page loads anything from the network.
mathjax_source = str(ROOT / "build" / "mathjax" / "node_modules" / "mathjax" / "es5")
mathjax_path = "mathjax/tex-chtml-full.js"
html_show_sourcelink = False

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # Every plot_*.py is run for its figures except the GPU one, which is shown with the
    # figures it draws on a machine with a GPU (its script falls back to the CPU there).
    "filename_pattern": r"/plot_(?!gpu)",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "write_computation_times": False,
    "show_memory": False,
    "remove_config_comments": True,
    "min_reported_time": 1,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "plot_gallery": "True",
    "run_stale_examples": False,
    "capture_repr": ("_repr_html_",),
}

benchmark_results = str(ROOT / "benchmarks" / "results")
benchmark_scripts = str(ROOT / "benchmarks")
