"""The cascade's global check kept on the workers (`solvers.smo.cascade`), run on an in-process
cluster: each round's incremental gradient equals a full recomputation, rows skipped far inside
the margin are checked before the fit ends (a violator planted among them is found), and the
cascade reaches the in-memory optimum."""

import numpy as np
import pytest

import svmkit
from svmkit.kernels.kinds import make_kernel
from svmkit.models.smo.on_cluster import PairForm
from svmkit.solvers.smo import cascade as cc


class Done:
    """A finished task's result, as a future of the in-process cluster."""

    def __init__(self, value):
        self.value = value


class InProcess:
    """The cluster seam `cascade` reads (submit, gather, timings, threads), its tasks run at once here."""

    def __init__(self):
        self.timings = []
        self.threads = 1

    def submit(self, func, *args, label=None):
        return Done(func(*(a.value if isinstance(a, Done) else a for a in args)))

    def gather(self, futures):
        if isinstance(futures, list):
            return [self.gather(f) for f in futures]
        return futures.value


def noisy(n=1200, seed=0):
    """Two classes 4 apart on the first axis with 5 % of the labels flipped (many support vectors)."""
    rng = np.random.default_rng(seed)
    X = 0.5 * rng.normal(size=(n, 5))
    X[:, 0] = rng.normal(size=n)
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 2.0 * y
    return X, np.where(rng.random(n) < 0.05, -y, y)


def run(X, y, parts=6, C=1.0, cluster=None):
    """The cascade of SVC(C) over `parts` partitions of (X, y) on `cluster` (None: an
    `InProcess` one), its rounds admitting at most ROUND_VIOLATORS variables (a solve's memory
    bound below them): (expansion, info, history)."""
    kernel = make_kernel("rbf", X, "scale")
    bounds = np.linspace(0, X.shape[0], parts + 1).astype(int)
    blocks = [(np.arange(a, b), X[a:b], y[a:b], None) for a, b in zip(bounds[:-1], bounds[1:])]
    form = PairForm(0, 1, C, np.array([-1, 1]), np.ones(2))
    history = []
    ((e, info),) = cc.cascade(cluster or InProcess(), blocks, kernel, [form], cc.Settings(cache_mb=1e-3), None,
                              lambda k, problem, i: history.append({"round": k, **i}))
    return e, info, history


@pytest.fixture
def few_per_round(monkeypatch):
    monkeypatch.setattr(cc, "ROUND_VIOLATORS", 40)


def test_the_incremental_gradient_equals_a_full_recomputation_after_every_round(monkeypatch, few_per_round):
    X, y = noisy()
    kernel = make_kernel("rbf", X, "scale")
    solve_of = {}
    compared = []
    change, update = cc.expansion_change, cc.update_check

    def recorded_change(old, new):
        out = change(old, new)
        solve_of[id(out)] = new
        return out

    def compared_update(kernel_, where, form, part, state, ch, full=False):
        out = update(kernel_, where, form, part, state, ch, full)
        S = solve_of[id(ch)].support
        decision = kernel.block(part[1][out.used], S.X) @ S.coefficients()
        fresh = ~out.skipped[out.at]
        full_gradient = out.y * decision[out.at] + out.p
        np.testing.assert_allclose(out.gradient()[fresh], full_gradient[fresh], rtol=0, atol=1e-10)
        compared.append((fresh.size - fresh.sum(), full))
        return out

    monkeypatch.setattr(cc, "expansion_change", recorded_change)
    monkeypatch.setattr(cc, "update_check", compared_update)
    _, info, history = run(X, y)
    assert info["optimal"] and info["rounds"] >= 4
    assert len(compared) == 6 * info["rounds"]  # the first check, then one after each round's solve
    assert any(skipped for skipped, _ in compared), "no row was skipped: shrinking untested"
    assert any(full for _, full in compared)
    in_memory = svmkit.SVC(C=1.0).fit(X, y)
    np.testing.assert_allclose(info["objective"], in_memory.objective_[0], rtol=1e-4)


def test_each_rounds_solve_starts_from_the_gradients_its_check_and_the_last_solve_found(monkeypatch, few_per_round):
    """A round's solve is given G of its variables from the checks, the support's as well as
    the violators', equal to a float64 recomputation against the expansion to 1e-10 (the last
    solve's own G, formed from float32 kernel rows, is not). The tree's solves, whose
    children's gradients miss each other's terms, recompute it."""
    X, y = noisy()
    kernel = make_kernel("rbf", X, "scale")
    given, solve, solve_set = [], cc.solve, cc.solve_set

    def recorded(problem, rows, alpha0=None, grad0=None, **kwargs):
        given.append(grad0 is not None)
        return solve(problem, rows, alpha0, grad0, **kwargs)

    def compared(kernel_, settings, *parts, threads=1, current=False):
        if current:
            S = parts[0].support
            for v in [S, *parts[1:]]:
                decision = kernel.block(v.X, S.X) @ S.coefficients()
                np.testing.assert_allclose(v.grad, v.y * decision[v.at] + v.p, rtol=0, atol=1e-10)
        return solve_set(kernel_, settings, *parts, threads=threads, current=current)

    monkeypatch.setattr(cc, "solve", recorded)
    monkeypatch.setattr(cc, "solve_set", compared)
    _, info, _ = run(X, y)
    assert info["optimal"] and info["rounds"] >= 4
    assert given[:6 + 3 + 2] == [False] * 11  # the leaves and the merges
    assert len(given) > 11 and all(given[11:])
    in_memory = svmkit.SVC(C=1.0).fit(X, y)
    np.testing.assert_allclose(info["objective"], in_memory.objective_[0], rtol=1e-4)


def test_each_rounds_solve_closes_its_own_gap_to_half_the_tolerance(monkeypatch, few_per_round):
    """A round's solve ends with its variables' extremes m_S − M_S ≤ tol/2, the tree's solves
    at tol: a round admits the variables outside it that violate by more than tol/2 against
    its midpoint, so the global gap closes once none does."""
    X, y = noisy()
    gaps, solve_set = [], cc.solve_set

    def measured(kernel_, settings, *parts, threads=1, current=False):
        out = solve_set(kernel_, settings, *parts, threads=threads, current=current)
        gaps.append((current, (out.m_up - out.m_low) / settings.tol))
        return out

    monkeypatch.setattr(cc, "solve_set", measured)
    _, info, _ = run(X, y)
    rounds = [g for current, g in gaps if current]
    assert info["optimal"] and len(rounds) >= 4
    assert max(rounds) <= 0.5 < max(g for current, g in gaps if not current)


def test_a_violator_planted_among_the_skipped_rows_is_found_before_the_fit_ends(monkeypatch, few_per_round):
    X, y = noisy()
    in_memory = svmkit.SVC(C=1.0).fit(X, y)
    # rows on the wrong side (bounded at the optimum): they violate until they join a solve
    wrong_side = in_memory.bounded_support_
    screen, planted = cc.screen, []

    def planting_screen(state, m, M, tol, theta):
        out = screen(state, m, M, tol, theta)
        if len(planted) < 6:  # the first round's screens: its violators on the wrong side skipped
            plant = (state.excess(m, M) > tol) & np.isin(out.gid, wrong_side)
            planted.append(out.gid[plant])
            out.skipped, out.since = out.skipped.copy(), out.since.copy()
            out.skipped[out.at[plant]] = True
            out.since[out.at[plant]] = len(out.missed)
        return out

    monkeypatch.setattr(cc, "screen", planting_screen)
    e, info, history = run(X, y)
    planted = np.concatenate(planted)
    assert info["optimal"] and planted.size
    assert np.isin(planted, e[0]).all(), "a planted violator is missing from the support"
    full_checks = [k for k, h in enumerate(history) if h["round"] and h["gap"] <= 1e-3 and h["skipped"]]
    assert full_checks and history[full_checks[0] + 1]["violating"] > 0
    np.testing.assert_allclose(info["objective"], in_memory.objective_[0], rtol=1e-4)


def test_rows_far_inside_are_skipped_and_the_fit_ends_on_a_full_check(few_per_round):
    X, y = noisy()
    _, info, history = run(X, y)
    assert max(h["skipped"] for h in history) > 0
    last = history[-1]
    assert last["skipped"] == 0 and last["gap"] <= 1e-3 and last["violating"] == 0
    assert last["checked"] == X.shape[0]


def test_the_most_violating_are_admitted_as_many_as_grow_with_their_number_within_the_memory_bound():
    settings = cc.Settings(cache_mb=100.0)
    room = int(100 * 2**20 / (8 * (50 + cc.VARIABLE_WORDS)))
    assert cc.admitted(1000, 100, 50, settings) == 1000
    assert cc.admitted(10**4, 100, 50, settings) == cc.ROUND_VIOLATORS
    assert cc.admitted(10**4, 500, 50, settings) == 500 * cc.ADMIT_SHARE
    assert cc.admitted(10**5, 10**4, 50, settings) == 10**5  # every one, while ≤ ADMIT_SHARE × #SV
    assert cc.admitted(10**6, 10, 50, settings) == 10**6 // cc.ADMIT_SHARE
    assert cc.admitted(10**8, 1000, 50, settings) == room - 1000
    assert cc.admitted(10**8, room, 50, settings) == cc.ROUND_VIOLATORS
    # per partition, its violators counted by bin of excess (least violating first): the most
    # violating of all are taken, not each partition's share
    spectra = [[5, 0, 1], [0, 3, 2], [1, 1, 0]]
    assert cc.allotted(4, spectra) == [1, 3, 0]
    assert cc.allotted(3, spectra) == [1, 2, 0]
    assert cc.allotted(20, spectra) == [6, 5, 2]


def test_the_solves_that_run_alone_take_the_clusters_threads(monkeypatch, few_per_round):
    """Leaves and merges that run side by side take one thread each; the top of the tree and
    each round's solve, which run alone, the cluster's threads (at most this machine's cores),
    whatever the worker's own limit."""
    from svmkit import _threads

    X, y = noisy()
    threads, solve = [], cc.solve

    def counted(*args, **kwargs):
        threads.append(_threads.compiled_thread_count())
        return solve(*args, **kwargs)

    monkeypatch.setattr(cc, "solve", counted)
    cluster = InProcess()
    cluster.threads = 2
    with _threads.compiled_threads(1):
        _, info, _ = run(X, y, parts=4, cluster=cluster)
    assert info["optimal"] and len(threads) > 4 + 2 + 1
    assert threads[:6] == [1] * 6
    assert threads[6:] == [min(2, _threads.usable_cores())] * (len(threads) - 6)


def outside_support(f, y):
    """A partition's check of variables outside the support (α = 0, one per row, p = −1) whose
    f = −yG are `f`."""
    n = f.size
    idx = np.arange(n)
    return cc.Checked(idx, idx, idx, -np.ones(n), y, np.ones(n), y - f, np.zeros(n, dtype=bool),
                      np.zeros(n, dtype=np.int8), np.ones(n, dtype=bool), np.zeros(n, dtype=np.int32))


def test_one_far_violator_makes_every_row_violate_against_the_extremes_but_not_against_the_threshold():
    # I_up (y = 1) must have f ≤ θ, I_low (y = −1) f ≥ θ; θ = 0, the last solve's midpoint
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    f = np.array([0.0002, 0.0003, 0.5, -0.0002, -0.0001, -3.0])
    state, tol = outside_support(f, y), 1e-3
    m, M = 0.5, -3.0
    against_extremes = cc.screen(state, m, M, tol, None)
    assert against_extremes.violating == 6 and against_extremes.wide == 6
    against_theta = cc.screen(state, m, M, tol, 0.0)
    assert against_theta.violating == 2 and against_theta.spectrum.sum() == 2 and against_theta.wide == 6
    part = (np.arange(6), np.arange(12.0).reshape(6, 2))
    admitted = cc.violators(part, state, (0.0, 0.0), tol, cap=6)
    np.testing.assert_array_equal(admitted.gid, [2, 5])
    np.testing.assert_array_equal(admitted.X, part[1][[2, 5]])


def test_a_round_admits_every_violator_while_they_fit_and_past_that_the_most_violating_against_the_threshold():
    p = cc.Problem(form=None, info={"n_sv": 10, "features": 5})
    settings = cc.Settings(cache_mb=1e-3)  # room for ROUND_VIOLATORS
    spectra = np.zeros((2, cc.EXCESS_BINS.size - 1), dtype=np.int64)
    spectra[:, 3] = [30, 10]
    few = [(spectra[0], 5, 300), (spectra[1], 2, 100)]
    assert p.admission(0.5, -3.0, 0.0, few, settings) == ((0.5, -3.0), 400, [300, 100])
    many = [(spectra[0], 5, 30000), (spectra[1], 2, 10000)]
    assert p.admission(0.5, -3.0, 0.0, many, settings) == ((0.0, 0.0), 40, [30, 10])


def test_a_round_ranks_against_the_threshold_when_far_extremes_stretch_the_band_of_violators():
    p = cc.Problem(form=None, info={"n_sv": 10, "features": 5})
    settings = cc.Settings(cache_mb=1e-3)
    spectra = np.zeros((2, cc.EXCESS_BINS.size - 1), dtype=np.int64)
    spectra[:, 3] = [30, 10]
    stretched = [(spectra[0], 5, cc.ADMIT_SHARE * 30), (spectra[1], 2, cc.ADMIT_SHARE * 10)]  # all would fit
    assert p.admission(0.5, -3.0, 0.0, stretched, settings) == ((0.0, 0.0), 40, [30, 10])
    assert p.admission(0.5, -3.0, None, stretched, settings)[:2] == ((0.5, -3.0), cc.ADMIT_SHARE * 40)
    just_under = [(spectra[0], 5, cc.ADMIT_SHARE * 30 - 1), (spectra[1], 2, cc.ADMIT_SHARE * 10)]
    assert p.admission(0.5, -3.0, 0.0, just_under, settings)[:2] == ((0.5, -3.0), cc.ADMIT_SHARE * 40 - 1)


def test_a_round_ranks_against_the_last_solves_midpoint_unless_its_solve_changed_nothing():
    p = cc.Problem(form=None, info={"m_up": 0.3, "m_low": 0.1}, solved=True)
    assert p.threshold(changed=12) == pytest.approx(0.2)
    assert p.threshold(changed=0) is None  # a solve that moved nothing: both ends of every pair
    p.solved = False
    assert p.threshold(changed=0) == pytest.approx(0.2)  # after a full check, no solve
    p.info = {"m_up": 0.3, "m_low": np.inf}
    assert p.threshold(changed=12) is None  # no variable of I_low in the solve


def test_a_start_gives_each_row_alpha_y_c_and_is_refused_where_a_label_bound_or_weight_does_not_admit_it():
    X, y = noisy(n=8)
    part = (np.arange(10, 18), X, y, np.r_[np.ones(7), 0.0])  # the last row weighs nothing
    form = PairForm(0, 1, 2.0, np.array([-1, 1]), np.ones(2))  # class -1 first: y = +1 for label -1
    sign = np.where(y == -1, 1.0, -1.0)
    rows = np.array([11, 13, 40])  # row 40 is another partition's
    v, held, ok = cc.start_variables(form, part, rows, np.array([0.5 * sign[1], 2.0 * sign[3], 1.0]))
    assert ok and held == 2
    np.testing.assert_array_equal(v.row, [11, 13])
    np.testing.assert_allclose(v.alpha, [0.5, 2.0])
    for coef, row in ((-0.5 * sign[1], 11), (2.5 * sign[1], 11), (0.5 * sign[7], 17)):  # label, bound, weight
        assert not cc.start_variables(form, part, np.array([row]), np.array([coef]))[2]
