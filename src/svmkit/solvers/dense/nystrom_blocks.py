"""Nyström fits whose rows stay where they live (blocks on a Dask cluster): each pass over the
data is a sum over row blocks of (M+1)-sized terms, `sum_blocks(func)` = Σ_blocks func(X_b,
T_b, c_b) reduced where the blocks are, so that only these sums travel.

Features Φ = K_NM T⁻¹ with K_MM = TᵀT (`newton.nystrom_features`), so that ΦΦᵀ = K_NM K_MM⁻¹ K_MN:
the Nyström kernel models are then linear models on Φ, whose solution θ over the features
gives the expansion over the centres, coef = T⁻¹θ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
from scipy.special import expit, log_expit, logsumexp, softmax

from svmkit.solvers.dense.newton import ARMIJO, MIN_STEP, NewtonResult
from svmkit.solvers.dense.nystrom import normal_equations_solve

#: Step lengths 1, ½, ¼, … tried in one pass by the line search.
STEPS = 0.5 ** np.arange(34)


@dataclass
class CentreKernel:
    """K(X_b, centres) of a block, and Φ_b = K(X_b, centres) T⁻¹."""

    kernel: object
    centres: np.ndarray
    T: np.ndarray = None

    def block(self, X):
        return self.kernel.block(np.ascontiguousarray(X, dtype=np.float64), self.centres)

    def features(self, X):
        return la.solve_triangular(self.T, self.block(X).T, trans="T", lower=False, check_finite=False).T


def least_squares(sum_blocks, centre_kernel: CentreKernel, K_MM, shift, bias):
    """β (M × k) and b (k) minimising ‖K_NM β + 1bᵀ − B‖² + s·tr(βᵀK_MM β) (the LS-SVM's and
    kernel ridge's Nyström problem, `nystrom.nystrom_solve`) from one pass of sums."""
    def terms(X, B, _c):
        K = centre_kernel.block(X)
        B = np.asarray(B, dtype=np.float64).reshape(K.shape[0], -1)
        return K.T @ K, K.T @ np.column_stack([B, np.ones(K.shape[0])]), B.sum(axis=0), np.array(K.shape[0])

    H, KtB1, B_sum, n = sum_blocks(terms)
    return normal_equations_solve(H, KtB1, B_sum, int(n), K_MM, shift, bias)


def _loss(f, T, c, binary):
    """Σ_n c_n ℓ(t_n, f_n): logistic (k = 1, t ∈ {0, 1}) or multinomial."""
    if binary:
        return float(-np.dot(c, (T * log_expit(f) + (1 - T) * log_expit(-f))[:, 0]))
    return float(np.dot(c, logsumexp(f, axis=1) - np.sum(T * f, axis=1)))


def _design(Phi):
    return np.column_stack([Phi, np.ones(Phi.shape[0])])


def logistic_newton(sum_blocks, centre_kernel: CentreKernel, k: int, tol: float, max_iter: int) -> NewtonResult:
    """Minimise J(θ, b) = ½‖θ‖² + Σ_n c_n ℓ(t_n, Φ_nθ + b) — kernel logistic regression on the
    Nyström kernel ΦΦᵀ (`newton.kernel_logistic_newton`'s J with Kβ = Φθ) — by Newton steps on
    z = (θ; b) ((M+1) × k). A pass gives J, the gradient (θ + Φ̃ᵀr with Φ̃ = [Φ 1], r_n =
    c_n(p_n − t_n); b unpenalised) and the Hessian Σ_n Φ̃_nᵀ W_n Φ̃_n + diag(I, 0) (W_n = c_n
    (diag p_n − p_n p_nᵀ)); a second pass gives J at every step of STEPS along the Newton
    direction, the largest meeting Armijo's condition taken. Stops when the gradient's largest
    component is below tol times its value at the start. Returns β = θ over the features."""
    m = centre_kernel.centres.shape[0] + 1
    binary = k == 1
    z = np.zeros((m, k))
    penalty = np.ones(m)
    penalty[-1] = 0.0

    def prob(f):
        return expit(f) if binary else softmax(f, axis=1)

    def first_pass(X, T, c):
        A = _design(centre_kernel.features(X))
        f = A @ z
        p = prob(f)
        r = c[:, None] * (p - T)
        H = np.empty((m * k, m * k))
        for a in range(k):
            for d in range(a, k):
                w = c * p[:, a] * ((a == d) - p[:, d])
                H[a * m:(a + 1) * m, d * m:(d + 1) * m] = A.T @ (w[:, None] * A)
                H[d * m:(d + 1) * m, a * m:(a + 1) * m] = H[a * m:(a + 1) * m, d * m:(d + 1) * m].T
        return np.array(_loss(f, T, c, binary)), A.T @ r, H

    def second_pass(X, T, c, dz):
        A = _design(centre_kernel.features(X))
        f, df = A @ z, A @ dz
        return np.array([_loss(f + t * df, T, c, binary) for t in STEPS])

    scale = None
    grad_max = np.inf
    J = np.inf
    it = 0
    for it in range(max_iter + 1):
        loss, G, H = sum_blocks(first_pass)
        J = 0.5 * float(np.sum(penalty[:, None] * z * z)) + float(loss)
        G = G + penalty[:, None] * z
        grad_max = float(np.abs(G).max())
        if scale is None:
            scale = max(grad_max, 1e-300)
        if grad_max <= tol * scale or it == max_iter:
            break
        H[np.diag_indices_from(H)] += np.tile(penalty, k)
        g = G.T.reshape(-1)  # class-major, as H's blocks
        try:
            d = -la.cho_solve(la.cho_factor(H, check_finite=False), g, check_finite=False)
        except la.LinAlgError:  # softmax's intercepts are defined up to a constant
            d = -la.lstsq(H, g, check_finite=False)[0]
        dz = d.reshape(k, m).T
        slope = float(g @ d)
        if slope >= 0:
            break
        (losses,) = sum_blocks(lambda X, T, c: (second_pass(X, T, c, dz),))
        new = [0.5 * float(np.sum(penalty[:, None] * (z + t * dz) ** 2)) + float(v) for t, v in zip(STEPS, losses)]
        ok = [j for j, t in enumerate(STEPS) if t >= MIN_STEP and new[j] <= J + ARMIJO * t * slope]
        if not ok:
            break
        z = z + STEPS[ok[0]] * dz
    b = z[-1] if binary else z[-1] - z[-1].mean()
    return NewtonResult(z[:-1], b, J, it, grad_max, grad_max <= tol * scale)
