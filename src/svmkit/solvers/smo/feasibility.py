"""Does a hard-constraint problem have a solution? Linear feasibility programs (HiGHS).

By the representer theorem a solution, if any, lies in the span of the data,
f(x) = Σ_j β_j K(x_j, x) + b, so feasibility is that of a linear system in (β, b):
separable iff y_i f(x_i) ≥ 1 for every i (the hard-margin primal, Boser, Guyon & Vapnik 1992); an ε-tube
fits iff |f(x_i) − t_i| ≤ ε for every i (the ε-SVR primal of Vapnik 1995 with ξ = 0).

HiGHS's tolerances are absolute, and it refuses a matrix entry above 1e15 or so: K is divided
by its largest magnitude κ (β' = κβ spans the same functions), and t, ε by the targets' largest
deviation from their midrange, so that the answer does not depend on the scale of the data.
"""

import numpy as np
from scipy.optimize import linprog


def _feasible(A_ub, b_ub) -> bool:
    m = A_ub.shape[1]
    res = linprog(np.zeros(m), A_ub=A_ub, b_ub=b_ub, bounds=[(None, None)] * m, method="highs")
    return res.status == 0


def _unit(K: np.ndarray) -> np.ndarray:
    """K / max |K_ij| (K itself when it is zero)."""
    top = np.abs(K).max(initial=0.0)
    return K / top if top > 0 else K


def is_separable(K: np.ndarray, y: np.ndarray) -> bool:
    n = y.shape[0]
    return _feasible(-y[:, None] * np.hstack([_unit(K), np.ones((n, 1))]), -np.ones(n))


def fits_tube(K: np.ndarray, t: np.ndarray, epsilon: float) -> bool:
    low, high = t.min(initial=0.0), t.max(initial=0.0)
    mid, half = low / 2 + high / 2, max(high / 2 - low / 2, epsilon)
    if half == 0:
        return True
    t, epsilon = (t - mid) / half, epsilon / half
    A = np.hstack([_unit(K), np.ones((t.shape[0], 1))])
    return _feasible(np.vstack([A, -A]), np.concatenate([t + epsilon, epsilon - t]))
