"""The dual problems of the SMO-type models, each in the solver's one form

    min ½ αᵀQα + pᵀα,  yᵀα = Δ,  0 ≤ α_i ≤ U_i,  Q_ij = y_i y_j K(x_kidx[i], x_kidx[j]),

with a feasible starting point α⁰ (which sets Δ). `weight` holds each row's C_i (C times its
sample and class weights). The ν forms start where LIBSVM does, filling bounds in row order.
"""

from __future__ import annotations

import numpy as np

from svmkit.solvers.smo import DualProblem


def _fill(caps: np.ndarray, total: float) -> np.ndarray:
    """α_i = min(cap_i, what is left of `total`), in order: LIBSVM's ν starting point."""
    before = np.concatenate([[0.0], np.cumsum(caps)[:-1]])
    return np.clip(total - before, 0.0, caps)


def c_svc(y: np.ndarray, weight: np.ndarray, kidx: np.ndarray):
    """C-SVC (Chang & Lin 2011, §2.1): p = −1, yᵀα = 0, U_i = C_i."""
    return DualProblem(p=-np.ones(y.size), y=y, upper=weight, kidx=kidx), None


def nu_svc(y: np.ndarray, weight: np.ndarray, nu: float, kidx: np.ndarray):
    """ν-SVC (Schölkopf et al. 2000) in LIBSVM's form before rescaling: p = 0, yᵀα = 0,
    Σα = ν Σw, 0 ≤ α_i ≤ w_i; the solution divided by r is the C-SVC one with C = 1/r."""
    alpha0 = np.zeros(y.size)
    half = nu * weight.sum() / 2
    for cls in (y > 0, y < 0):
        alpha0[cls] = _fill(weight[cls], half)
    return DualProblem(p=np.zeros(y.size), y=y, upper=weight, kidx=kidx, nu_mode=True), alpha0


def nu_svc_batch(y: np.ndarray, weight: np.ndarray, nu: float, kidx: np.ndarray, owner: np.ndarray):
    """`nu_svc` of many problems at once (variable i of problem owner[i], each problem's
    variables of a class in their order), None unless every weight is a whole number: its
    sums are then exact in any order, so each start is the one `nu_svc` gives alone."""
    if not np.array_equal(weight, np.round(weight)) or weight.sum() >= 2**53:
        return None
    half = nu * np.bincount(owner, weights=weight)[owner] / 2
    group = 2 * owner + (y < 0)
    order = np.argsort(group, kind="stable")
    w = weight[order]
    earlier = np.cumsum(w) - w  # the weight before each variable, over every group
    starts = np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1]])
    before = np.empty(y.size)
    before[order] = earlier - np.repeat(earlier[starts], np.diff(np.r_[starts, y.size]))
    alpha0 = np.clip(half - before, 0.0, weight)
    return DualProblem(p=np.zeros(y.size), y=y, upper=weight, kidx=kidx, nu_mode=True), alpha0


def epsilon_svr(target: np.ndarray, weight: np.ndarray, epsilon: float, kidx: np.ndarray):
    """ε-SVR (Vapnik 1995; Chang & Lin 2011, §2.4) over (α, α*): p = (ε − t, ε + t), y = (+1, −1), yᵀα = 0."""
    n = target.size
    p = np.concatenate([epsilon - target, epsilon + target])
    y = np.concatenate([np.ones(n), -np.ones(n)])
    return DualProblem(p=p, y=y, upper=np.tile(weight, 2), kidx=np.tile(kidx, 2)), None


def quantile(target: np.ndarray, weight: np.ndarray, tau: float, kidx: np.ndarray):
    """Kernel quantile regression at level τ (Takeuchi, Le, Sears & Smola 2006): the dual of the
    pinball loss, max aᵀt − ½aᵀKa with C_i(τ − 1) ≤ a_i ≤ C_i τ and Σa = 0, written over
    (α, α*) with a = α − α* as ε-SVR's with ε = 0 and the boxes U = (τ C_i, (1 − τ) C_i)."""
    n = target.size
    y = np.concatenate([np.ones(n), -np.ones(n)])
    return DualProblem(p=np.concatenate([-target, target]), y=y, upper=np.concatenate([tau * weight, (1 - tau) * weight]),
                       kidx=np.tile(kidx, 2)), None


def nu_svr(target: np.ndarray, weight: np.ndarray, nu: float, kidx: np.ndarray):
    """ν-SVR (Schölkopf et al. 2000) over (α, α*): p = (−t, t), Σα + Σα* = ν Σ C_i; the tube width
    ε comes out as −r."""
    n = target.size
    start = _fill(weight, nu * weight.sum() / 2)
    y = np.concatenate([np.ones(n), -np.ones(n)])
    problem = DualProblem(p=np.concatenate([-target, target]), y=y, upper=np.tile(weight, 2),
                          kidx=np.tile(kidx, 2), nu_mode=True)
    return problem, np.tile(start, 2)


def one_class(weight: np.ndarray, nu: float, kidx: np.ndarray):
    """One-class SVM (Schölkopf et al. 2001): p = 0, y = +1, Σα = ν Σw, 0 ≤ α_i ≤ w_i."""
    n = weight.size
    problem = DualProblem(p=np.zeros(n), y=np.ones(n), upper=weight, kidx=kidx)
    return problem, _fill(weight, nu * weight.sum())
