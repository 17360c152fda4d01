"""The solvers keep their state in objects, as LIBSVM's Solver does, not in long argument lists:
no function of `svmkit.solvers` or of the compiled core takes more than MOST parameters."""

import ast
import inspect
from pathlib import Path

import svmkit
from svmkit import _core

MOST = 8
SOLVERS = Path(svmkit.__file__).parent / "solvers"


def _count(args: ast.arguments) -> int:
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    extra = (args.vararg is not None) + (args.kwarg is not None)
    return len(names) - (names[:1] in (["self"], ["cls"])) + extra


def _top_level_parts(text: str) -> list[str]:
    """`text` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "([{"
        depth -= c in ")]}"
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return parts + [tail] if tail else parts


def _core_signatures():
    """(name, parameter count) of every function and method the core binds, each overload."""
    for sub in (getattr(_core, n) for n in dir(_core)):
        if not inspect.ismodule(sub):
            continue
        for name in dir(sub):
            owner = getattr(sub, name)
            if isinstance(owner, type):
                members = [(f"{name}.{m}", getattr(owner, m)) for m in vars(owner)
                           if not m.startswith("__") or m == "__init__"]
            else:
                members = [(name, owner)] if callable(owner) else []
            for label, fn in members:
                for signature, *_ in getattr(fn, "__nb_signature__", ()):
                    inner = signature[signature.index("(") + 1: signature.rindex(")")]
                    params = [p for p in _top_level_parts(inner) if p not in ("self", "/", "*")]
                    yield f"{sub.__name__}.{label}", len(params)


def test_no_solver_function_takes_more_than_eight_parameters():
    wide = []
    for path in sorted(SOLVERS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _count(node.args) > MOST:
                wide.append(f"{path.name}:{node.lineno} {node.name} ({_count(node.args)})")
    assert wide == []


def test_no_core_function_takes_more_than_eight_parameters():
    signatures = list(_core_signatures())
    assert len(signatures) > 10  # the core's families are bound and read
    assert [f"{name} ({n})" for name, n in signatures if n > MOST] == []


def test_the_counts_are_read_right():
    tree = ast.parse("def f(self, a, b=1, *c, d, **e): pass\ndef g(x, /, y): pass")
    assert [_count(n.args) for n in tree.body] == [5, 2]
    assert _top_level_parts("a: int, b: tuple[int, float], c: ndarray[dtype=float64, shape=(*)]") == \
        ["a: int", "b: tuple[int, float]", "c: ndarray[dtype=float64, shape=(*)]"]
