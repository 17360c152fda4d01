"""No module imports a layer above its own: kernels → solvers → models → (selection,
inspection, io, preprocessing, plot) → cli, with the shared helpers and the execution layer (parallel) below
all of them."""

import ast
from pathlib import Path

import svmkit

ROOT = Path(svmkit.__file__).parent

#: Layer of each top-level part of the package; a module may import only its own layer or lower.
LAYERS = {"_arrays": 0, "_core": 0, "_threads": 0, "_validation": 0, "_version": 0, "parallel": 0,
          "_metrics": 0, "exceptions": 0, "registry": 0, "options": 0, "kernels": 1, "solvers": 2, "backend": 2,
          "models": 3, "model_selection": 4, "inspection": 4, "io": 4, "preprocessing": 4,
          "plot": 4, "band": 4, "cli": 5, "__main__": 5, "": 5}

#: Modules compiled at install, which have no .py file in the tree.
COMPILED = {"svmkit._core"}


def _part(module: str) -> str:
    """The top-level part of a dotted svmkit module name ('' for the package root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path):
    """Every svmkit module the file imports (at any depth: a lazy import counts too)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "svmkit")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "svmkit":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                is_module = sub in COMPILED or (ROOT.parent / Path(*sub.split("."))).with_suffix(".py").exists() or \
                    (ROOT.parent / Path(*sub.split("."))).is_dir()
                yield sub if is_module else base


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        name = _module_name(path)
        own = LAYERS[_part(name)]
        for target in _imports(path):
            if LAYERS[_part(target)] > own:
                upward.append(f"{name} imports {target}")
    assert upward == []


def test_every_part_of_the_package_has_a_layer():
    parts = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    assert parts - {"__init__"} <= set(LAYERS)
