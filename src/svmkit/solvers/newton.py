"""Newton's method for kernel logistic regression (Zhu & Hastie 2005).

    min J(β, b) = ½ Σ_c β_cᵀ K β_c + Σ_n c_n ℓ(t_n, f_n),   f = Kβ + b (n × k),

ℓ the logistic loss (k = 1: t ∈ {0, 1}, p = σ(f)) or the multinomial one (k ≥ 2: t one-hot,
p = softmax(f)); c_n > 0 weighs row n (C times its sample weight); b is not penalised. With
r_n = c_n (p_n − t_n) the gradient is (K g̃, Σ_n r_n), g̃ = β + r, and the Hessian
(K + K W K, K W E; EᵀW K, EᵀW E) with W_n = c_n ∂p_n/∂f_n (k × k, W_n = R_n², R_n symmetric)
and E the map of b onto every row.

A Newton step (dβ, db) solves, with Δf = K dβ + E db, dβ = −g̃ − W·Δf and EᵀW·Δf = −Eᵀr.
Written for u = R·Δf it is one symmetric positive definite system A = I + R K R (eigenvalues
≥ 1) with k + 1 right-hand sides — the bordered form of the closed-form issue's LS-SVM, i.e.
iteratively reweighted least squares — solved by Cholesky when small, else by conjugate
gradient preconditioned with a Nyström approximation of K (Woodbury). An Armijo backtracking
line search on J makes every step descend; the iteration stops when the gradient's largest
component is below `tol` times its size at the start.

The solver sees the kernel only through `KernelOperator`: `matmul(V)` = K V and `features`
Φ (n × m) with K ≈ ΦΦᵀ; it knows nothing of estimators.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
from scipy.special import expit, log_expit, logsumexp, softmax

from svmkit._arrays import to_host
from svmkit.solvers.factorisations import conjugate_gradient

#: Largest n·k whose Newton system is formed and factorised by Cholesky.
DENSE_MAX = 2500
#: Armijo constant and the smallest step of the backtracking line search.
ARMIJO = 1e-4
MIN_STEP = 1e-10
#: Floor of the curvature weights p(1 − p), which keeps the system's scaling finite.
MIN_WEIGHT = 1e-12


class KernelOperator:
    """K as the solver needs it: products K V, its dense form when small, and features Φ
    (n × m) with ΦΦᵀ ≈ K for the preconditioner (exact when Φ spans K's range), made by
    `make_features` on first use (the Cholesky path never needs them)."""

    def __init__(self, matmul, n: int, make_features, dense=None):
        self.matmul = matmul
        self.n = n
        self._make_features = make_features
        self._features = None
        self.dense = dense

    @property
    def features(self) -> np.ndarray:
        if self._features is None:
            self._features = self._make_features()
        return self._features


def dense_operator(K, n_features: int, seed: int = 0, xp=np) -> KernelOperator:
    """The operator of a kernel matrix K held in memory, with Nyström features from
    `n_features` uniformly chosen columns. K may be an array of a device module `xp` (CuPy):
    the products K V then run there, V and the results on the host; `dense()` copies K to the
    host once."""
    n = K.shape[0]
    m = min(n, n_features)
    cols = xp.asarray(np.sort(np.random.default_rng(seed).choice(n, size=m, replace=False)))
    return KernelOperator(lambda V: to_host(K @ xp.asarray(V)), n,
                          lambda: nystrom_features(to_host(K[:, cols]), to_host(K[xp.ix_(cols, cols)]))[0],
                          dense=functools.cache(lambda: to_host(K)))


def feature_operator(Phi: np.ndarray) -> KernelOperator:
    """The operator of the low-rank kernel ΦΦᵀ (Nyström), never formed."""
    return KernelOperator(lambda V: Phi @ (Phi.T @ V), Phi.shape[0], lambda: Phi)


def nystrom_features(K_NM: np.ndarray, K_MM: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Φ, T): Φ = K_NM T⁻¹ with K_MM = TᵀT (jittered when singular), so that
    ΦΦᵀ = K_NM K_MM⁻¹ K_MN."""
    m = K_MM.shape[0]
    jitter = 1e-10 * m * max(float(np.mean(np.diag(K_MM))), np.finfo(float).tiny)
    T = la.cholesky(K_MM + jitter * np.eye(m), lower=False, check_finite=False)
    return la.solve_triangular(T, K_NM.T, trans="T", lower=False, check_finite=False).T, T


@dataclass
class NewtonResult:
    """β (n × k), b (k), J at the solution, Newton steps, the final gradient's largest
    component and whether it met the tolerance."""

    beta: np.ndarray
    intercept: np.ndarray
    objective: float
    n_iter: int
    grad_max: float
    converged: bool


class _Loss:
    """The logistic (k = 1) or multinomial loss of the targets T (n × k)."""

    def __init__(self, T: np.ndarray):
        self.T = T
        self.binary = T.shape[1] == 1

    def value(self, f, c):
        """Σ_n c_n ℓ(t_n, f_n)."""
        if self.binary:
            return float(-np.dot(c, (self.T * log_expit(f) + (1 - self.T) * log_expit(-f))[:, 0]))
        return float(np.dot(c, logsumexp(f, axis=1) - np.sum(self.T * f, axis=1)))

    def prob(self, f):
        return expit(f) if self.binary else softmax(f, axis=1)

    def root_weights(self, p, c):
        """R_n with R_n² = c_n (diag(p_n) − p_n p_nᵀ) (k = 1: √(c_n p_n (1 − p_n)))."""
        root_c = np.sqrt(c)[:, None, None]
        if self.binary:
            return root_c * np.sqrt(np.maximum(p * (1 - p), MIN_WEIGHT))[:, :, None]
        W = np.einsum("nc,cd->ncd", p, np.eye(p.shape[1])) - p[:, :, None] * p[:, None, :]
        vals, vecs = np.linalg.eigh(W)
        return root_c * np.einsum("nab,nb,ncb->nac", vecs, np.sqrt(np.maximum(vals, 0.0)), vecs)


def _apply(R, V):
    """R_n V_n for every row n (R: n × k × k, V: n × k)."""
    return np.einsum("nab,nb->na", R, V)


class _System:
    """A = I + R K R on (n × k)-shaped vectors, solved by Cholesky or by preconditioned CG."""

    def __init__(self, op: KernelOperator, R: np.ndarray):
        self.op, self.R = op, R
        n, k = R.shape[0], R.shape[1]
        self.shape = (n, k)
        self.factor = None
        if op.dense is not None and n * k <= DENSE_MAX:
            K = op.dense()
            A = np.einsum("ij,iab,jac->ibjc", K, R, R).reshape(n * k, n * k)
            A[np.diag_indices_from(A)] += 1.0
            try:
                self.factor = la.cho_factor(A, lower=True, check_finite=False)
            except la.LinAlgError:  # I + RKR is positive definite for every PSD kernel K
                raise ValueError("the kernel matrix is not positive semidefinite: kernel logistic regression's "
                                 "Newton system I + R K R has no Cholesky factor; check the kernel, or lower C "
                                 "(R grows with √C and magnifies the kernel's rounding errors)") from None
        else:
            # Woodbury with K ≈ ΦΦᵀ per class, R taken diagonal: P = I + D Φ Φᵀ D
            Phi = op.features
            d = np.einsum("naa->na", R)
            self.U = [d[:, [c]] * Phi for c in range(k)]
            self.small = [la.cho_factor(np.eye(Phi.shape[1]) + U.T @ U, lower=True, check_finite=False)
                          for U in self.U]

    def matvec(self, V):
        n, k = self.shape
        RV = np.einsum("nab,nbj->naj", self.R, V.reshape(n, k, -1))
        KRV = self.op.matmul(RV.reshape(n, -1)).reshape(RV.shape)
        return (V.reshape(RV.shape) + np.einsum("nab,nbj->naj", self.R, KRV)).reshape(n * k, -1)

    def precondition(self, V):
        V = V.reshape(self.shape[0], self.shape[1], -1)
        out = V.copy()
        for c, (U, small) in enumerate(zip(self.U, self.small)):
            out[:, c, :] -= U @ la.cho_solve(small, U.T @ V[:, c, :], check_finite=False)
        return out.reshape(self.shape[0] * self.shape[1], -1)

    def solve(self, B, tol):
        """A⁻¹B for right-hand sides B (n × k × r)."""
        flat = B.reshape(self.shape[0] * self.shape[1], -1)
        if self.factor is not None:
            X = la.cho_solve(self.factor, flat, check_finite=False)
        else:
            X, _ = conjugate_gradient(self.matvec, flat, self.precondition, tol=tol, max_iter=1000)
        return X.reshape(B.shape)


def _intercept_step(S, rhs):
    """db with S·db = rhs. Multinomial (k ≥ 2): softmax is unchanged by adding one constant to
    every class, so S·1 = 0; db is taken with Σdb = 0, where a truncated CG solve leaves S
    merely ill-conditioned rather than singular."""
    k = S.shape[0]
    if k == 1:
        return rhs / S[0, 0]
    P = np.eye(k) - 1.0 / k
    S = P @ S @ P + np.trace(S) / k ** 2
    return np.linalg.solve(S, P @ rhs)


def objective_and_gradient(op: KernelOperator, T: np.ndarray, c: np.ndarray, beta: np.ndarray, b: np.ndarray):
    """(J, ∂J/∂β, ∂J/∂b) at (β, b): J = ½ Σ_c β_cᵀKβ_c + Σ_n c_n ℓ(t_n, f_n), ∂J/∂β = K(β + r),
    ∂J/∂b = Σ_n r_n with r_n = c_n (p_n − t_n)."""
    loss = _Loss(np.asarray(T, dtype=np.float64))
    Kbeta = op.matmul(beta)
    J = 0.5 * float(np.sum(beta * Kbeta)) + loss.value(Kbeta + b, c)
    r = c[:, None] * (loss.prob(Kbeta + b) - loss.T)
    return J, op.matmul(beta + r), r.sum(axis=0)


def kernel_logistic_newton(op: KernelOperator, T: np.ndarray, c: np.ndarray, tol: float = 1e-6,
                           max_iter: int = 100) -> NewtonResult:
    """Minimise J(β, b) for the targets T (n × 1 with values in {0, 1}: logistic; n × k one-hot,
    k ≥ 2: multinomial) and row weights c (n,) by damped Newton steps. See the module docstring."""
    loss = _Loss(np.asarray(T, dtype=np.float64))
    n, k = loss.T.shape
    c = np.asarray(c, dtype=np.float64)
    beta = np.zeros((n, k))
    Kbeta = np.zeros((n, k))
    mean = np.clip(np.average(loss.T, axis=0, weights=c), 1e-12, 1 - 1e-12)
    b = np.log(mean / (1 - mean)) if loss.binary else np.log(mean) - np.log(mean).mean()

    def objective(beta_, Kbeta_, b_):
        return 0.5 * float(np.sum(beta_ * Kbeta_)) + loss.value(Kbeta_ + b_, c)

    J = objective(beta, Kbeta, b)
    scale = None
    grad_max = np.inf
    it = 0
    for it in range(max_iter + 1):
        p = loss.prob(Kbeta + b)
        r = c[:, None] * (p - loss.T)
        g_tilde = beta + r
        Kg = op.matmul(g_tilde)
        g_b = r.sum(axis=0)
        grad_max = max(float(np.abs(Kg).max()), float(np.abs(g_b).max()))
        if scale is None:
            scale = max(grad_max, 1e-300)
        if grad_max <= tol * scale or it == max_iter:
            break
        R = loss.root_weights(p, c)
        system = _System(op, R)
        E = np.broadcast_to(R.transpose(0, 2, 1), (n, k, k))  # column c: R_n e_c (R symmetric)
        rhs = np.concatenate([-_apply(R, Kg)[:, :, None], E], axis=2)
        Z = system.solve(rhs, min(1e-2, grad_max / scale))
        RZ = np.einsum("nab,nbj->naj", R, Z)
        db = _intercept_step(RZ[:, :, 1:].sum(axis=0), -g_b - RZ[:, :, 0].sum(axis=0))
        dbeta = -g_tilde - _apply(R, Z[:, :, 0] + Z[:, :, 1:] @ db)
        dK = op.matmul(dbeta)
        slope = float(np.sum(Kg * dbeta) + np.dot(g_b, db))
        if slope >= 0:
            break
        step = 1.0
        while step >= MIN_STEP:
            J_new = objective(beta + step * dbeta, Kbeta + step * dK, b + step * db)
            if J_new <= J + ARMIJO * step * slope:
                break
            step /= 2
        if step < MIN_STEP:
            break
        beta, Kbeta, b, J = beta + step * dbeta, Kbeta + step * dK, b + step * db, J_new
    if not loss.binary:
        b = b - b.mean()
    return NewtonResult(beta, b, objective(beta, Kbeta, b), it, grad_max, grad_max <= tol * scale)
