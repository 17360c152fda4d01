"""The solver's working-set sizes, its kernel-row cache bound, its reusable scratch memory and
the factorisation of its Newton steps."""

from dataclasses import replace

import numpy as np
import pytest

from conftest import DATASETS
from svmkit._arrays import SCRATCH
from svmkit.kernels.gram import TrainingKernel, as_kernel_input
from svmkit.kernels.kinds import make_kernel
from svmkit._core.smo import PANEL, BlockSolver, cholesky_solve, independent_cholesky
from svmkit.solvers.smo.row_source import CachedRows
from svmkit.solvers.smo.solver import FULL_BLOCK, DualProblem, block_size, solve


class _Rows:
    """A kernel of n points that is never evaluated: only its size matters here."""

    def __init__(self, n):
        self.n = n
        self.diag = np.ones(n)


def test_cache_holds_no_more_than_cache_size_at_a_million_rows():
    rows = CachedRows(_Rows(1_000_000), cache_size=2000)
    assert rows.store.nbytes <= 2000 * 2**20
    q = block_size(1_000_000, 1_000_000, rows.capacity)
    assert 2 <= q <= rows.capacity // 2


def test_small_problem_is_one_block_and_large_or_uncacheable_ones_are_batched():
    assert block_size(3000, 3000, capacity=3000) == 3000
    assert block_size(3000, 3000, capacity=1000) == 500
    assert block_size(FULL_BLOCK + 1, FULL_BLOCK + 1, capacity=10**6) == 2048


def _binary_digits(C=10.0):
    X, y = DATASETS["digits"]()
    X, y = as_kernel_input(X[y < 2]), np.where(y[y < 2] == 0, 1.0, -1.0)
    return X, y, DualProblem(p=-np.ones(y.size), y=y, upper=np.full(y.size, C), kidx=np.arange(y.size))


@pytest.mark.parametrize("shrinking", [True, False])
def test_one_block_and_batched_blocks_reach_the_same_optimum(shrinking):
    X, y, problem = _binary_digits()
    kernel = TrainingKernel(make_kernel("rbf", X, 0.02), X)
    whole = solve(problem, CachedRows(kernel, 100), shrinking=shrinking)
    batched = solve(problem, CachedRows(kernel, 100), ws_size=32, shrinking=shrinking)
    assert whole.objective == pytest.approx(batched.objective, rel=1e-4)
    assert whole.rho == pytest.approx(batched.rho, abs=1e-3)


@pytest.mark.parametrize("capacity", [2, 4])
def test_blocks_reading_their_shared_kernel_values_take_the_same_steps_as_from_the_row_source(monkeypatch, capacity):
    """The kernel values a solve's blocks share are copies of the rows' own: the same α and
    pair updates as blocks gathering from the full-width rows, also when the values start
    again (room for two blocks, or four)."""
    from svmkit.solvers.smo import _cuda, _loops, solver

    X, y, problem = _binary_digits()
    kernel = TrainingKernel(make_kernel("rbf", X, 0.02), X)
    monkeypatch.setattr(solver, "_BLOCK_ROWS_PER_BLOCK", capacity)
    shared = solve(problem, CachedRows(kernel, 100), ws_size=32)
    monkeypatch.setattr(_loops, "BlockRows", _cuda.BlockRows)
    direct = solve(problem, CachedRows(kernel, 100), ws_size=32)
    assert shared.n_iter == direct.n_iter
    np.testing.assert_array_equal(shared.alpha, direct.alpha)


def test_scratch_buffers_are_reused_and_bounded(monkeypatch):
    monkeypatch.setattr(SCRATCH, "_kept", [])
    a = SCRATCH.take((100, 100), np.float32)
    SCRATCH.give(a)
    b = SCRATCH.take((50, 50), np.float64)
    assert np.shares_memory(a, b)
    SCRATCH.give(b)
    big = SCRATCH.take((SCRATCH.keep_bytes + 1,), np.uint8)
    SCRATCH.give(big)
    assert sum(buf.nbytes for buf in SCRATCH._kept) <= SCRATCH.keep_bytes


def test_a_buffer_handed_back_while_take_holds_the_lock_is_kept(monkeypatch):
    """The garbage collector may run a row store's finalizer, which hands its buffer back,
    in the thread that holds the lock inside `take`."""
    monkeypatch.setattr(SCRATCH, "_kept", [])
    monkeypatch.setattr(SCRATCH, "_returned", [])
    a = SCRATCH.take((100, 100), np.float32)
    with SCRATCH._lock:
        SCRATCH.give(a)
    assert np.shares_memory(a, SCRATCH.take((100, 100), np.float32))


def test_a_cache_smaller_than_a_working_set_still_solves():
    """Gradient rebuilds and hard-margin Gram blocks fetch at most the cache's capacity."""
    X, y, problem = _binary_digits(C=0.001)
    kernel = TrainingKernel(make_kernel("rbf", X, 0.02), X)
    rows = CachedRows(kernel, 0.05)
    ref = solve(problem, CachedRows(kernel, 100))
    assert np.count_nonzero(ref.alpha) > rows.capacity
    res = solve(problem, rows, alpha0=ref.alpha)
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)


def test_blocked_newton_factor_is_lapacks_cholesky_with_duplicate_rows_dropped():
    """Over several panels, the Newton step's factor keeps every row but the repeated copies
    (whose pivots vanish), equals LAPACK's Cholesky factor of the kept rows, and solves with it."""
    X = DATASETS["heart_scale"]()[0].toarray()
    X = np.vstack([X, X[[3, 100, 200]]])  # rows 270, 271, 272 repeat rows 3, 100, 200
    n = X.shape[0]
    assert n > 4 * PANEL
    sq = (X * X).sum(1)
    H = np.exp(-0.05 * (sq[:, None] + sq[None, :] - 2 * X @ X.T))
    R, kept = independent_cholesky(H, 1e-10)
    np.testing.assert_array_equal(np.flatnonzero(~kept), [270, 271, 272])
    assert not R[~kept].any() and not R[:, ~kept].any()
    Hk = H[np.ix_(kept, kept)]
    Rk = R[np.ix_(kept, kept)]
    np.testing.assert_allclose(Rk, np.linalg.cholesky(Hk).T, atol=1e-9)
    B = np.random.default_rng(0).standard_normal((Hk.shape[0], 3))
    np.testing.assert_allclose(cholesky_solve(np.ascontiguousarray(Rk), B), np.linalg.solve(Hk, B), rtol=1e-6, atol=1e-8)


def _block_solver(K, y):
    """The compiled block solver over q variables whose slots are their indices, with the
    kernel store K (float32 rows, one per variable)."""
    q = y.size
    store = np.ascontiguousarray(K, dtype=np.float32)
    return BlockSolver(store, np.arange(q), np.arange(q), y, np.ones(q), np.ones(q), np.zeros((q, q), dtype=np.float32))


def test_newton_factor_is_extended_by_entering_variables_and_rebuilt_for_a_dependent_one():
    rng = np.random.default_rng(0)
    n = 400
    X = rng.standard_normal((n, 20))
    X[n - 1] = X[3]  # the last variable duplicates variable 3
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    K = np.exp(-0.05 * ((X[:, None] - X[None]) ** 2).sum(-1))
    Q = (y[:, None] * y[None]) * K.astype(np.float32)
    block = _block_solver(K, y)
    assert block.newton_factor(np.arange(300))
    assert block.factor[0].shape == (300, 300)
    # variables 0-4 leave the free set and 300-309 enter: the factor grows by the ten (fewer
    # flops than a new one), and R on its base (0-309, in that order) is the Cholesky factor of Q there
    assert not block.newton_factor(np.arange(5, 310))
    R, H, base = block.factor
    np.testing.assert_array_equal(base, np.arange(310))
    np.testing.assert_allclose(R.T @ R, Q[:310, :310], atol=1e-9)
    np.testing.assert_allclose(H, Q[:310, :310], atol=1e-12)
    # the last variable duplicates 3, which the base still holds though 3 is no longer free:
    # the free set does not depend on it, so the factor is rebuilt on the free variables alone
    free = np.r_[np.arange(5, 310), n - 1]
    assert block.newton_factor(free)
    R, _, base = block.factor
    assert R.shape == (306, 306)
    np.testing.assert_array_equal(base, free)
    assert block.credit < 0


def test_blocks_larger_than_the_row_source_are_sized_apart_from_it_where_their_values_are_held():
    assert block_size(10**6, 10**6, capacity=250, holds_blocks=True) == 2048
    assert block_size(10**6, 10**6, capacity=3276, holds_blocks=True) == 1638
    assert block_size(10**6, 10**6, capacity=250) == 125


def test_block_values_computed_for_new_variables_equal_those_read_from_whole_rows():
    """Only the values between the variables new to the held ones and the held ones are
    computed; the others' columns come from K's symmetry, and equal the values read from their
    own rows."""
    from svmkit.solvers.smo._loops import BlockRows

    rng = np.random.default_rng(0)
    A = rng.normal(size=(40, 40)).astype(np.float32)
    K = A @ A.T
    whole, computed = BlockRows(40, 30), BlockRows(40, 30)
    asked = []

    def cross(a, b):
        asked.extend(a)
        return K[np.ix_(a, b)]

    for ws in (np.arange(10), np.arange(5, 18), np.array([2, 30, 17, 31, 9])):
        asked.clear()
        v1, s1, _ = whole.take(ws, K, ws, ws)
        v2, s2, _ = computed.take_computed(ws, ws, cross)
        np.testing.assert_array_equal(s1, s2)
        np.testing.assert_array_equal(v1[np.ix_(s1, s1)], v2[np.ix_(s2, s2)])
        np.testing.assert_array_equal(v2[np.ix_(s2, s2)], K[np.ix_(ws, ws)])
    assert sorted(asked) == [30, 31]


def test_a_block_larger_than_the_row_source_reaches_the_whole_problems_optimum():
    X, y, problem = _binary_digits()
    kernel = TrainingKernel(make_kernel("rbf", X, 0.02), X)
    small = CachedRows(kernel, 0.05)
    assert block_size(problem.n, problem.n, small.capacity, 128, holds_blocks=True) == 128 > small.capacity
    whole = solve(problem, CachedRows(kernel, 100))
    pieces = solve(problem, small, ws_size=128)
    assert pieces.objective == pytest.approx(whole.objective, rel=1e-6)
    assert pieces.rho == pytest.approx(whole.rho, abs=1e-3)


def _zero_against_the_other_digits(C):
    """y, the dual of C-SVC and its RBF kernel (γ = 1 / (d · Var X)) for digit 0 against the
    other nine: 1,797 rows."""
    X, digit = DATASETS["digits"]()
    X, y = as_kernel_input(X), np.where(digit == 0, 1.0, -1.0)
    problem = DualProblem(p=-np.ones(y.size), y=y, upper=np.full(y.size, C), kidx=np.arange(y.size))
    return y, problem, TrainingKernel(make_kernel("rbf", X, 1 / (X.shape[1] * X.var())), X)


def _spy_narrowing(monkeypatch):
    """The active problems solved on their own points, as (variables of the whole, active)."""
    from svmkit.solvers.smo import solver

    seen = []
    solve_active = solver.DualSolve._solve_active

    def spy(self, act, tol):
        seen.append((self.problem.n, act.size))
        return solve_active(self, act, tol)

    monkeypatch.setattr(solver.DualSolve, "_solve_active", spy)
    return seen


@pytest.mark.parametrize("C", [1.0, 10.0])
def test_a_shrunk_problem_solved_on_its_own_points_keeps_G_exact(monkeypatch, C):
    """Where the cache cannot hold every row, the active variables are solved on rows over
    their own points: the result's G equals Qα + p from the dense kernel, and the optimum is
    the one-block solve's."""
    y, problem, kernel = _zero_against_the_other_digits(C)
    seen = _spy_narrowing(monkeypatch)
    small = CachedRows(kernel, 0.2)
    assert small.capacity < problem.n
    res = solve(problem, small, ws_size=32)
    # an active problem's own active problem too: its rebuilds add only its own moves
    assert any(n < problem.n for n, _ in seen) and all(2 * act <= n for n, act in seen)
    whole = solve(problem, CachedRows(kernel, 100))
    Q = y[:, None] * y[None, :] * kernel.exact_block(np.arange(problem.n))
    np.testing.assert_allclose(res.grad, Q @ res.alpha + problem.p, atol=1e-4)
    assert res.objective == pytest.approx(whole.objective, rel=1e-6)
    assert res.rho == pytest.approx(whole.rho, abs=1e-3)


def test_rebuilt_shrunk_gradients_keep_what_the_starting_gradient_held(monkeypatch):
    """A rebuild of shrunk gradients adds the moves since the last one to the gradients it
    had (G = G' + Q(α − α')), never recomputing them from p: a start's G off p by a known
    vector (as a cascade's round starts from the float64 G of its checks) is solved as the
    problem with that linear term, every gradient keeping the offset."""
    y, problem, kernel = _zero_against_the_other_digits(1.0)
    seen = _spy_narrowing(monkeypatch)
    shifted = problem.p + 0.05 * np.sin(np.arange(problem.n))
    res = solve(problem, CachedRows(kernel, 0.2), grad0=shifted, ws_size=32)
    assert seen
    whole = solve(replace(problem, p=shifted), CachedRows(kernel, 100))
    Q = y[:, None] * y[None, :] * kernel.exact_block(np.arange(problem.n))
    np.testing.assert_allclose(res.grad, Q @ res.alpha + shifted, atol=1e-4)
    assert res.rho == pytest.approx(whole.rho, abs=1e-3)
    assert 0.5 * res.alpha @ (res.grad + shifted) == pytest.approx(whole.objective, rel=1e-6)


def test_a_narrowed_row_source_gives_the_same_rows_within_the_memory_its_source_releases():
    X, _, _ = _binary_digits()
    kernel = TrainingKernel(make_kernel("rbf", X, 0.02), X)
    rows = CachedRows(kernel, 0.2)
    before = rows.store.nbytes
    rows.fetch(np.arange(10))
    idx = np.array([300, 5, 17, 5, 120])
    narrow, where = rows.narrowed(idx)
    assert rows.store is None and not rows.held(np.arange(10)).any()
    assert narrow.n == 4 and narrow.store.nbytes <= before
    store, pos = narrow.fetch(where)
    np.testing.assert_allclose(store[np.ix_(pos, where)], kernel.exact_block(idx), rtol=1e-6)
    narrow.release()
    assert narrow.store is None
    full, pos = rows.fetch(idx)
    assert full.nbytes == before
    np.testing.assert_allclose(full[np.ix_(pos, idx)], kernel.exact_block(idx), rtol=1e-6)


def _spy_blocks(monkeypatch):
    """The (variables, row source capacity, block size) of every DualSolve made."""
    from svmkit.solvers.smo import solver

    made = []
    init = solver.DualSolve.__init__

    def spy(self, problem, rows, settings, alpha0=None):
        made.append((problem.n, rows.capacity, settings.q))
        init(self, problem, rows, settings, alpha0)

    monkeypatch.setattr(solver.DualSolve, "__init__", spy)
    return made


def test_an_active_problem_sizes_its_blocks_by_its_own_row_source(monkeypatch):
    """From a warm start, blocks are half the row source; an active problem on rows over its
    own points holds more of them, and sizes its blocks by its own source (`block_size`)."""
    from svmkit.solvers.smo import solver

    _, problem, kernel = _zero_against_the_other_digits(1.0)
    start = solve(problem, CachedRows(kernel, 100), tol=0.5)
    monkeypatch.setattr(solver, "COLD_SHARE", problem.n + 1)  # every nonzero start is warm
    made = _spy_blocks(monkeypatch)
    res = solve(problem, CachedRows(kernel, 0.1, min_rows=2), alpha0=start.alpha, grad0=start.grad, ws_size=256)
    (n, capacity, q), *active = made
    assert n == problem.n and q == capacity // 2
    assert all(q == block_size(n, n, capacity, 256) for n, capacity, q in active)
    assert any(made[0][2] < q < n for n, _, q in active)
    assert res.objective == pytest.approx(solve(problem, CachedRows(kernel, 100)).objective, rel=1e-6)


def test_a_start_with_few_nonzero_variables_takes_the_blocks_of_a_cold_solve(monkeypatch):
    """A start with at most 1/COLD_SHARE of its variables nonzero (a cascade's round over many
    more violators than support vectors) is solved in blocks larger than half the row source,
    as from α = 0; one with more, in blocks of half the row source."""
    from svmkit.solvers.smo import solver

    _, problem, kernel = _zero_against_the_other_digits(1.0)
    start = solve(problem, CachedRows(kernel, 100), tol=0.5)
    nonzero = np.count_nonzero(start.alpha)
    assert 0 < solver.COLD_SHARE * nonzero <= problem.n
    made = _spy_blocks(monkeypatch)
    small = CachedRows(kernel, 0.1, min_rows=2)
    res = solve(problem, small, alpha0=start.alpha, grad0=start.grad, ws_size=256)
    assert made[0] == (problem.n, small.capacity, 256) and 256 > small.capacity // 2
    made.clear()
    monkeypatch.setattr(solver, "COLD_SHARE", problem.n // nonzero + 1)
    solve(problem, CachedRows(kernel, 0.1, min_rows=2), alpha0=start.alpha, grad0=start.grad, ws_size=256)
    assert made[0] == (problem.n, small.capacity, small.capacity // 2)
    assert res.objective == pytest.approx(solve(problem, CachedRows(kernel, 100)).objective, rel=1e-6)
