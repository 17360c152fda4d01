"""The seams model selection and calibration stand on: a fit on a row source it is given,
warm starts, the solver alone on either row source, and what a stopped solve reports."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

import svmkit
from conftest import heart_scale, scale_gamma
from svmkit.kernels.gram import TrainingKernel, as_kernel_input
from svmkit.kernels.kinds import make_kernel
from svmkit.models.session import fit_on, open_session
from svmkit.solvers.smo.row_source import row_source
from svmkit.solvers.smo.solver import DualProblem, solve
from svmkit.solvers.smo.starts import best_start, feasible_start


def _shared_rows(X, gamma, cache_size=100):
    Xk = as_kernel_input(X)
    return row_source(TrainingKernel(make_kernel("rbf", Xk, gamma), Xk), cache_size)


def test_fit_on_a_shared_row_source_equals_a_fit_on_the_fold():
    X, y = heart_scale()
    g = scale_gamma(X)
    fold = np.random.default_rng(0).permutation(y.size)[:180]
    rows = _shared_rows(X, g)
    model = svmkit.SVC(C=4.0, gamma=g)
    shared = fit_on(model, open_session(model, X[fold], y[fold], rows=rows, row_index=fold))
    alone = svmkit.SVC(C=4.0, gamma=g).fit(X[fold], y[fold])
    np.testing.assert_array_equal(shared.support_, alone.support_)
    np.testing.assert_allclose(shared.dual_coef_, alone.dual_coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(shared.intercept_, alone.intercept_, rtol=1e-9)


@pytest.mark.parametrize("model", [svmkit.SVC(C=2.0), svmkit.NuSVC(nu=0.3), svmkit.SVR(C=2.0),
                                   svmkit.OneClassSVM(nu=0.3)])
def test_warm_start_from_the_solution_needs_no_more_work(model):
    X, y = heart_scale()
    cold = model.fit(X, y)
    warm = type(model)(**model.get_params())
    warm = fit_on(warm, open_session(warm, X, y), after=(cold, None))
    assert np.sum(warm.n_iter_) <= 1
    np.testing.assert_allclose(warm.dual_coef_, cold.dual_coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(warm.intercept_, cold.intercept_, rtol=1e-9, atol=1e-12)


def test_warm_start_along_c_reaches_the_cold_optimum():
    """α of C = 1 doubled is feasible for C = 2 (yᵀα stays 0, α ≤ 2); its gradient is doubled
    apart from the linear term: G = Q(2α) − 1 = 2(G₁ + 1) − 1."""
    X, y = heart_scale()
    small = svmkit.SVC(C=1.0).fit(X, y)
    warm = svmkit.SVC(C=2.0)
    warm = fit_on(warm, open_session(warm, X, y), after=(small, None))
    cold = svmkit.SVC(C=2.0).fit(X, y)
    np.testing.assert_allclose(warm.objective_, cold.objective_, rtol=1e-4)
    np.testing.assert_allclose(warm.decision_function(X), cold.decision_function(X), atol=2e-3)


def test_the_line_through_two_solutions_is_the_next_while_the_active_sets_hold():
    """Between changes of its free and bounded sets the dual solution is affine in C, so the
    line through the solutions at C₀ and C₁ meets the solution at C₂ (the scaled α does not),
    and the fit from it has nothing left to do."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(40) > 0, 1, -1)
    Cs = (1.0, 1.01, 1.02)
    fits = [svmkit.SVC(C=c, kernel="linear", tol=1e-12).fit(X, y) for c in Cs]
    sets = {(tuple(f._problem_fits[0].free), tuple(f._problem_fits[0].bounded)) for f in fits}
    assert len(sets) == 1
    model = svmkit.SVC(C=Cs[2], kernel="linear", tol=1e-12)
    [points] = model._starts_from(fits[1], fits[0])
    (scaled, _), (line, _) = points
    solution = fits[2]._problem_fits[0].result.alpha
    np.testing.assert_allclose(line, solution, atol=1e-9)
    assert np.abs(scaled - solution).max() > 1e-3
    warm = fit_on(model, open_session(model, X, y), after=(fits[1], fits[0]))
    assert warm.n_iter_[0] <= 2
    np.testing.assert_allclose(warm.dual_coef_, fits[2].dual_coef_, atol=1e-9)


def test_the_solution_with_its_bounded_variables_lifted_is_the_next_on_a_nearly_diagonal_kernel():
    """At γ = 8 heart_scale's kernel is nearly the identity: the free α do not depend on the
    bounded ones (here a row repeated with the other label, both at the bound), so α of C = 2
    with its variables at the bound moved to 8 solves C = 8 (the scaled α, every free α times
    4, takes more pair updates than a cold fit)."""
    X, y = heart_scale()
    X, y = sp.vstack([X, X[:1]]).tocsr(), np.r_[y, -y[:1]]
    small = svmkit.SVC(C=2.0, gamma=8.0).fit(X, y)
    [points] = svmkit.SVC(C=8.0, gamma=8.0)._starts_from(small)
    assert len(points) == 2 and points[1][2].sum() == 2
    warm = svmkit.SVC(C=8.0, gamma=8.0)
    warm = fit_on(warm, open_session(warm, X, y), after=(small, None))
    cold = svmkit.SVC(C=8.0, gamma=8.0).fit(X, y)
    assert warm.n_iter_[0] <= 1 < cold.n_iter_[0]
    np.testing.assert_allclose(warm.objective_, cold.objective_, rtol=1e-9)


def test_a_start_is_taken_only_from_points_with_the_first_points_equality_sums():
    """A ν dual's class sums scale with ν: α of another ν (lower objective here) is no start."""
    X, y = heart_scale()
    rows = _shared_rows(X, scale_gamma(X))
    n = y.size
    yy = np.where(y > 0, 1.0, -1.0)
    problem = DualProblem(p=np.zeros(n), y=yy, upper=np.ones(n), kidx=np.arange(n), nu_mode=True)
    Q = rows.block(np.arange(n)) * np.outer(yy, yy)
    first, other = np.full(n, 0.5), np.full(n, 0.25)
    start, _ = best_start(problem, rows, [(first, Q @ first), (other, Q @ other)])
    np.testing.assert_array_equal(start, first)
    start, _ = best_start(problem, rows, [(other, Q @ other), (first, Q @ first)])
    np.testing.assert_array_equal(start, other)


@pytest.mark.parametrize("nu_mode", [False, True])
def test_a_start_outside_the_box_is_clipped_with_its_constraints_and_gradient_restored(nu_mode):
    """A point past the box is clipped into it; free variables restore yᵀα (ν mode: each
    class's sum) and G = Qα + p is corrected exactly, against the dense kernel."""
    X, y = heart_scale()
    rows = _shared_rows(X, scale_gamma(X))
    n = y.size
    yy = np.where(y > 0, 1.0, -1.0)
    problem = DualProblem(p=-np.ones(n), y=yy, upper=np.full(n, 2.0), kidx=np.arange(n), nu_mode=nu_mode)
    Q = rows.block(np.arange(n)) * np.outer(yy, yy)
    raw = np.random.default_rng(1).uniform(-0.5, 2.5, n)
    start, G = feasible_start(problem, rows, raw, Q @ raw)
    assert (start >= 0).all() and (start <= 2.0).all()
    groups = [yy > 0, yy < 0] if nu_mode else [np.ones(n, dtype=bool)]
    weights = np.ones(n) if nu_mode else yy
    for members in groups:
        np.testing.assert_allclose(weights[members] @ start[members], weights[members] @ raw[members], atol=1e-9)
    np.testing.assert_allclose(G, Q @ start - 1.0, rtol=1e-9, atol=1e-9)


def test_full_and_cached_row_sources_give_the_same_solution():
    X, y = heart_scale()
    g = scale_gamma(X)
    Xd = X.toarray()
    problem = DualProblem(p=-np.ones(y.size), y=np.where(y > 0, 1.0, -1.0), upper=np.full(y.size, 3.0),
                          kidx=np.arange(y.size))
    full = solve(problem, row_source(matrix=rbf_kernel(Xd, gamma=g)), tol=1e-9)
    cached = solve(problem, _shared_rows(Xd, g, cache_size=0.05), tol=1e-9)
    np.testing.assert_allclose(cached.alpha, full.alpha, atol=1e-5)
    np.testing.assert_allclose(cached.objective, full.objective, rtol=1e-9)


def test_row_source_block_is_the_kernel_submatrix():
    X, _ = heart_scale()
    g = scale_gamma(X)
    idx = np.array([5, 0, 77, 200, 31])
    block = _shared_rows(X, g, cache_size=0.05).block(idx)
    Xd = X.toarray()[idx]
    np.testing.assert_allclose(block, rbf_kernel(Xd, gamma=g), rtol=1e-6)


def test_nu_mode_on_two_points_puts_equal_weight_on_each():
    """Two points x₁ = 0 (y = +1), x₂ = 1 (y = −1), linear kernel, ν-SVC's dual with Σα = ν·2,
    α ≤ 1: yᵀα = 0 forces α₁ = α₂ = ν; ρ and r are the midpoints of their feasible intervals."""
    K = np.array([[0.0, 0.0], [0.0, 1.0]])
    problem = DualProblem(p=np.zeros(2), y=np.array([1.0, -1.0]), upper=np.ones(2), kidx=np.arange(2),
                          nu_mode=True)
    res = solve(problem, row_source(matrix=K), alpha0=np.array([0.6, 0.6]))
    np.testing.assert_allclose(res.alpha, [0.6, 0.6])
    np.testing.assert_allclose(res.objective, 0.5 * 0.36)


def test_stopped_solve_warns_and_sets_fit_status():
    X, y = heart_scale()
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        stopped = svmkit.SVC(max_iter=5).fit(X, y)
    assert stopped.fit_status_ == 1
    assert svmkit.SVC().fit(X, y).fit_status_ == 0


def test_resolved_gamma_is_public():
    X, y = heart_scale()
    m = svmkit.SVC(gamma="scale").fit(X, y)
    assert m.gamma_ == pytest.approx(scale_gamma(X))
