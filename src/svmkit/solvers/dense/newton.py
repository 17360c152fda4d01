"""Newton's method for kernel logistic regression (Zhu & Hastie 2005).

    min J(β, b) = ½ Σ_c β_cᵀ K β_c + Σ_n c_n ℓ(t_n, f_n),   f = Kβ + b (n × k),

ℓ the logistic loss (k = 1: t ∈ {0, 1}, p = σ(f)) or the multinomial one (k ≥ 2: t one-hot,
p = softmax(f)); c_n > 0 weighs row n (C times its sample weight); b is not penalised. With
r_n = c_n (p_n − t_n) the gradient is (K g̃, Σ_n r_n), g̃ = β + r, and the Hessian
(K + K W K, K W E; EᵀW K, EᵀW E) with W_n = c_n ∂p_n/∂f_n = c_n (diag(p_n) − p_n p_nᵀ) (k × k)
and E the map of b onto every row.

W_n = L_n L_nᵀ with L_n = √c_n diag(√p_n) (I − q_n q_nᵀ), q_n = √p_n a unit vector, so
that I − q qᵀ is a projector (k = 1: L_n = √(c_n p_n (1 − p_n))); L_n and L_nᵀ apply to a
vector in O(k), and W is never formed. A Newton step (dβ, db) solves, with Δf = K dβ + E db,
dβ = −g̃ − W·Δf and EᵀW·Δf = −Eᵀr. Written for u = Lᵀ·Δf it is one symmetric positive
definite system A = I + Lᵀ K L (eigenvalues ≥ 1) — the bordered form of an LS-SVM, i.e.
iteratively reweighted least squares — solved for the right-hand side −LᵀKg̃, for the k
columns LᵀE (a few at a time: only their k × k sum Σ_n L_n A⁻¹(LᵀE)_n, which gives db, is
kept) and for LᵀE db; by Cholesky when small, else by conjugate gradient preconditioned
with a Nyström approximation of K (Woodbury). An Armijo backtracking
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
from svmkit.solvers.dense.factorisations import conjugate_gradient

#: Largest n·k whose Newton system is formed and factorised by Cholesky.
DENSE_MAX = 2500
#: Armijo constant and the smallest step of the backtracking line search.
ARMIJO = 1e-4
MIN_STEP = 1e-10
#: Floor of the curvature weights p(1 − p), which keeps the system's scaling finite.
MIN_WEIGHT = 1e-12
#: Right-hand sides LᵀE solved at once: memory n·k·RHS_BLOCK rather than n·k².
RHS_BLOCK = 16
#: Values of the k preconditioner factors held at once (m × m each, m Nyström features).
PRECONDITIONER_ELEMENTS = 2**20


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
        """L with L_n L_nᵀ = c_n (diag(p_n) − p_n p_nᵀ) (k = 1: √(c_n p_n (1 − p_n)))."""
        if self.binary:
            return _Root(np.sqrt(c[:, None] * np.maximum(p * (1 - p), MIN_WEIGHT)), None)
        return _Root(np.sqrt(c[:, None] * p), np.sqrt(p))


class _Root:
    """L_n = diag(s_n) (I − q_n q_nᵀ) for every row n (q None: L_n = diag(s_n)), applied to
    V (n × k × r) without forming it."""

    def __init__(self, s, q):
        self.s, self.q = s, q

    def _project(self, V):
        if self.q is None:
            return V
        return V - self.q[:, :, None] * np.einsum("na,naj->nj", self.q, V)[:, None, :]

    def apply(self, V):
        """L V."""
        return self.s[:, :, None] * self._project(V)

    def apply_t(self, V):
        """Lᵀ V."""
        return self._project(self.s[:, :, None] * V)

    def diagonal(self):
        """The square roots of diag(L Lᵀ), the weights of the preconditioner."""
        if self.q is None:
            return self.s
        return self.s * np.sqrt(np.maximum(1 - self.q ** 2, 0.0))

    def matrices(self):
        """L (n × k × k), formed."""
        k = self.s.shape[1]
        return self.apply(np.broadcast_to(np.eye(k), (self.s.shape[0], k, k)))


class _System:
    """A = I + Lᵀ K L on (n × k)-shaped vectors, solved by Cholesky or by preconditioned CG."""

    def __init__(self, op: KernelOperator, L: _Root):
        self.op, self.L = op, L
        n, k = L.s.shape
        self.shape = (n, k)
        self.factor = None
        if op.dense is not None and n * k <= DENSE_MAX:
            K, Lm = op.dense(), L.matrices()
            A = np.einsum("ij,iab,jac->ibjc", K, Lm, Lm).reshape(n * k, n * k)
            A[np.diag_indices_from(A)] += 1.0
            try:
                self.factor = la.cho_factor(A, lower=True, check_finite=False)
            except la.LinAlgError:  # I + LᵀKL is positive definite for every PSD kernel K
                raise ValueError("the kernel matrix is not positive semidefinite: kernel logistic regression's "
                                 "Newton system I + Lᵀ K L has no Cholesky factor; check the kernel, or lower C "
                                 "(L grows with √C and magnifies the kernel's rounding errors)") from None
        else:
            # Woodbury with K ≈ ΦΦᵀ per class, L taken diagonal: P = I + D Φ Φᵀ D; Φ's first
            # columns are the Nyström features of the first landmarks alone (Φ = K_NM T⁻¹, T
            # triangular), as many as keep the k factors within PRECONDITIONER_ELEMENTS
            m = min(op.features.shape[1], max(1, int(np.sqrt(PRECONDITIONER_ELEMENTS / k))))
            self.Phi, self.d = op.features[:, :m], L.diagonal()
            # (I + U_cᵀU_c)⁻¹, U_c = D_c Φ, for every class at once: eigenvalues ≥ 1, so the
            # inverses are well conditioned, and a preconditioning is three batched products
            small = np.empty((k, m, m))
            for c in range(k):
                U = self.d[:, [c]] * self.Phi
                np.matmul(U.T, U, out=small[c])
            small[:, np.arange(m), np.arange(m)] += 1.0
            self.inverse = np.linalg.inv(small)

    def matvec(self, V):
        n, k = self.shape
        LV = self.L.apply(V.reshape(n, k, -1))
        KLV = self.op.matmul(LV.reshape(n, -1)).reshape(LV.shape)
        return (V.reshape(LV.shape) + self.L.apply_t(KLV)).reshape(n * k, -1)

    def precondition(self, V):
        """P⁻¹V per class c: V_c − U_c (I + U_cᵀU_c)⁻¹ U_cᵀ V_c (Woodbury)."""
        n, k = self.shape
        V = V.reshape(n, k, -1)
        m, r = self.Phi.shape[1], V.shape[2]
        Y = (self.Phi.T @ (self.d[:, :, None] * V).reshape(n, k * r)).reshape(m, k, r).transpose(1, 0, 2)
        Z = np.matmul(self.inverse, Y).transpose(1, 0, 2).reshape(m, k * r)
        return (V - self.d[:, :, None] * (self.Phi @ Z).reshape(n, k, r)).reshape(n * k, -1)

    def solve(self, B, tol):
        """A⁻¹B for right-hand sides B (n × k × r)."""
        flat = B.reshape(self.shape[0] * self.shape[1], -1)
        if self.factor is not None:
            X = la.cho_solve(self.factor, flat, check_finite=False)
        else:
            X, _ = conjugate_gradient(self.matvec, flat, self.precondition, tol=tol, max_iter=1000)
        return X.reshape(B.shape)

    def intercept_block(self, tol):
        """Σ_n L_n Z_n for Z = A⁻¹ LᵀE (k × k: column c from the right-hand side Lᵀ e_c on
        every row), RHS_BLOCK columns at a time."""
        n, k = self.shape
        S = np.empty((k, k))
        for lo in range(0, k, RHS_BLOCK):
            cols = np.arange(lo, min(k, lo + RHS_BLOCK))
            E = np.zeros((n, k, cols.size))
            E[:, cols, np.arange(cols.size)] = 1.0
            S[:, cols] = self.L.apply(self.solve(self.L.apply_t(E), tol)).sum(axis=0)
        return S


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


def _gradient_max(op: KernelOperator, loss: _Loss, c, beta, Kbeta, b) -> float:
    """The largest component of J's gradient (K(β + r) for β, Σr for b, r = c(p − T)) at (β, b):
    tol's scale."""
    r = c[:, None] * (loss.prob(Kbeta + b) - loss.T)
    return max(float(np.abs(op.matmul(beta + r)).max()), float(np.abs(r.sum(axis=0)).max()), 1e-300)


def kernel_logistic_newton(op: KernelOperator, T: np.ndarray, c: np.ndarray, tol: float = 1e-6,
                           max_iter: int = 100, start=None) -> NewtonResult:
    """Minimise J(β, b) for the targets T (n × 1 with values in {0, 1}: logistic; n × k one-hot,
    k ≥ 2: multinomial) and row weights c (n,) by damped Newton steps, from β = 0 and the
    intercept of the class frequencies, or from `start` = (β, b) (a warm start: J is convex, so
    any start reaches its minimum). The scale of tol is the gradient at β = 0 either way. See
    the module docstring."""
    loss = _Loss(np.asarray(T, dtype=np.float64))
    n, k = loss.T.shape
    c = np.asarray(c, dtype=np.float64)
    beta = np.zeros((n, k))
    Kbeta = np.zeros((n, k))
    mean = np.clip(np.average(loss.T, axis=0, weights=c), 1e-12, 1 - 1e-12)
    b = np.log(mean / (1 - mean)) if loss.binary else np.log(mean) - np.log(mean).mean()
    scale = None
    if start is not None:
        scale = _gradient_max(op, loss, c, beta, Kbeta, b)
        beta, b = np.asarray(start[0], dtype=np.float64).reshape(n, k), np.asarray(start[1], dtype=np.float64)
        Kbeta = op.matmul(beta)

    def objective(beta_, Kbeta_, b_):
        return 0.5 * float(np.sum(beta_ * Kbeta_)) + loss.value(Kbeta_ + b_, c)

    J = objective(beta, Kbeta, b)
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
        L = loss.root_weights(p, c)
        system = _System(op, L)
        cg_tol = min(1e-2, grad_max / scale)
        u = system.solve(-L.apply_t(Kg[:, :, None]), cg_tol)
        db = _intercept_step(system.intercept_block(cg_tol), -g_b - L.apply(u)[:, :, 0].sum(axis=0))
        u += system.solve(L.apply_t(np.broadcast_to(db[None, :, None], (n, k, 1))), cg_tol)
        dbeta = -g_tilde - L.apply(u)[:, :, 0]
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
