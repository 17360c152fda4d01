"""Is a labelled set separable by a kernel? A linear feasibility program (HiGHS).

By the representer theorem a separating function lies in the span of the data,
f(x) = Σ_j β_j K(x_j, x) + b, so the set is separable iff some (β, b) satisfies
y_i f(x_i) ≥ 1 for every i: the feasibility of the hard-margin primal (seed 001 (1)).
"""

import numpy as np
from scipy.optimize import linprog


def is_separable(K: np.ndarray, y: np.ndarray) -> bool:
    n = y.shape[0]
    A = -y[:, None] * np.hstack([K, np.ones((n, 1))])
    res = linprog(np.zeros(n + 1), A_ub=A, b_ub=-np.ones(n), bounds=[(None, None)] * (n + 1), method="highs")
    return res.status == 0
