"""The seams hold: the models and model selection decide on the device, Dask, the kernel kind or
sparsity in at most five `if` lines (the backend, the kernel kinds and the execution layer decide
the rest), and nothing outside models/ reaches into an estimator's private names."""

import ast
import re
from pathlib import Path

import svmkit

ROOT = Path(svmkit.__file__).parent
#: What a branch on the device, Dask, the kernel kind or sparsity names in its condition.
VARIANT = re.compile(r"device|cuda|dask|precomputed|callable|sparse")


def _conditions(tree):
    """The condition of every `if` statement, conditional expression and comprehension filter."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp)):
            yield node.test
        elif isinstance(node, ast.comprehension):
            yield from node.ifs


def _private_names(folder: Path) -> set[str]:
    """Every single-underscore name a module of `folder` defines or assigns as an attribute."""
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_models_and_model_selection_branch_on_variants_at_most_five_times():
    branches = []
    for folder in ("models", "model_selection"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            source = path.read_text()
            for test in _conditions(ast.parse(source)):
                if VARIANT.search(ast.get_source_segment(source, test)):
                    branches.append(f"{path.relative_to(ROOT)}:{test.lineno}")
    assert len(branches) <= 5, branches


def test_nothing_outside_models_reaches_into_an_estimators_private_names():
    private = _private_names(ROOT / "models")
    reaches = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.is_relative_to(ROOT / "models"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr in private
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                reaches.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert reaches == []
