"""Parameter grids: LIBSVM grid.py's log2 ranges and default (C, γ) grid, and the checks a grid
must pass before a search starts."""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.model_selection import ParameterGrid

#: grid.py's defaults: log2 C from −5 to 15 step 2, log2 γ from 3 to −15 step −2 (110 cells),
#: and log2 ε (its `-log2p`) from −8 to −1 step 1 when ε is searched.
LOG2C = (-5.0, 15.0, 2.0)
LOG2G = (3.0, -15.0, -2.0)
LOG2P = (-8.0, -1.0, 1.0)
#: ν values of the default grid of the ν models.
NU_VALUES = (0.1, 0.2, 0.3, 0.4, 0.5)
#: λ values of kernel ridge's default grid.
ALPHA_VALUES = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)

#: Parameters whose grid values must be positive reals.
_POSITIVE = ("C", "gamma", "nu", "alpha")


#: The most values one log2 range may have, and the largest |exponent|: 2**e stays a normal float64.
MAX_RANGE_VALUES = 10_000
MAX_EXPONENT = 1022


def log2_range(begin: float, end: float, step: float) -> list[float]:
    """The exponents begin, begin + step, … up to and including end (grid.py's range_f)."""
    given = f"begin={begin:g}, end={end:g}, step={step:g}"
    if not all(math.isfinite(v) for v in (begin, end, step)):
        raise ValueError(f"a log2 range needs finite numbers, got {given}")
    if step == 0 or (end - begin) * step < 0:
        raise ValueError(f"a log2 range must step from begin towards end, got {given}")
    count = int(np.floor((end - begin) / step + 1e-9)) + 1
    if count > MAX_RANGE_VALUES:
        raise ValueError(f"a log2 range of {count} values is too long (at most {MAX_RANGE_VALUES}), got {given}")
    return [begin + k * step for k in range(count)]


def powers_of_two(begin: float, end: float, step: float) -> list[float]:
    """2**e for the exponents of `log2_range`, each within float64's normal range."""
    exponents = log2_range(begin, end, step)
    if max(abs(begin), abs(exponents[-1])) > MAX_EXPONENT:
        raise ValueError(f"2**e overflows or underflows float64 for |e| > {MAX_EXPONENT}, got the log2 range "
                         f"begin={begin:g}, end={end:g}, step={step:g}")
    return [float(2.0**e) for e in exponents]


def default_grid(estimator) -> dict[str, list]:
    """grid.py's grid for the estimator: C (ν for the ν models without C, λ for kernel ridge),
    by γ for the kernels that have one (RBF, poly, sigmoid)."""
    params = estimator.get_params()
    grid = {}
    if params.get("kernel") in ("rbf", "poly", "sigmoid"):
        grid["gamma"] = powers_of_two(*LOG2G)
    if "C" in params:
        grid["C"] = powers_of_two(*LOG2C)
    elif "nu" in params:
        grid["nu"] = list(NU_VALUES)
    elif "alpha" in params:
        grid["alpha"] = list(ALPHA_VALUES)
    if not grid:
        raise ValueError(f"{type(estimator).__name__} has no default grid: give param_grid")
    return grid


def check_grid(param_grid, estimator) -> list[dict]:
    """The cells of `param_grid` (a dict or a list of dicts of lists), checked: at least one,
    parameters the estimator has (a Pipeline's `step__param` names), positive C, γ, ν and λ."""
    grids = [param_grid] if isinstance(param_grid, dict) else list(param_grid)
    if not grids:
        raise ValueError(f"param_grid has no cells, got param_grid={param_grid!r}: give a dict of lists of values")
    names = set(estimator.get_params())
    for grid in grids:
        if not isinstance(grid, dict):
            raise ValueError(f"param_grid must be a dict or a list of dicts, got {type(grid).__name__}")
        for name, values in grid.items():
            if name not in names:
                # a Pipeline's parameters are its steps' under `step__param` names
                like = sorted(n for n in names if n.endswith(f"__{name}"))
                raise ValueError(f"param_grid names {name!r}, which {type(estimator).__name__} does not have"
                                 + (f"; did you mean {' or '.join(map(repr, like))}?" if like else ""))
            if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
                raise ValueError(f"param_grid[{name!r}] must be a list of values, got {values!r}")
            base = name.rpartition("__")[2]
            if base in _POSITIVE:
                for v in values:
                    if isinstance(v, str) and base == "gamma" and v in ("scale", "auto"):
                        continue
                    if not isinstance(v, numbers.Real) or isinstance(v, bool) or not v > 0 or np.isnan(v):
                        raise ValueError(f"param_grid[{name!r}] values must be positive, got {v!r}")
    return list(ParameterGrid(grids))
