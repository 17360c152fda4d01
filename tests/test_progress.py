"""The training progress bar: the solver reports its maximal KKT violation at every outer step,
and the bar turns it into a log-scale share of the way to tol."""

import numpy as np
import pytest

import svmkit
from conftest import heart_scale, iris
from svmkit.cli.progress import GapBar, share
from svmkit.solvers.smo.solver import gap_observer


def test_solver_reports_its_gap_down_to_tol_once_per_problem():
    seen = []
    token = gap_observer.set(lambda gap, tol: seen.append((gap, tol)))
    try:
        svmkit.SVC(C=10.0).fit(*iris())
    finally:
        gap_observer.reset(token)
    starts = [k for k, (gap, _) in enumerate(seen) if gap is None]
    assert len(starts) == 3  # one per class pair
    gaps = [gap for gap, _ in seen[starts[-1] + 1:]]
    assert gaps[-1] <= 1e-3 < gaps[0]


def test_nothing_is_reported_outside_the_context():
    assert gap_observer.get() is None
    svmkit.SVC().fit(*heart_scale())


def test_share_is_logarithmic_toward_tol():
    assert share(1.0, 1.0, 1e-3) == 0
    assert share(1.0, 1e-1, 1e-3) == 33
    assert share(1.0, 1e-3, 1e-3) == 99  # the bar completes only when a gap ≤ tol is seen
    assert share(1e-4, 1e-5, 1e-3) == 0  # started below tol: nothing to show


class _Bar:
    def __init__(self):
        self.n, self.total, self.desc = 0, None, ""

    def reset(self, total):
        self.n, self.total = 0, total

    def update(self, k):
        self.n += k

    def set_description(self, desc):
        self.desc = desc

    def clear(self):
        self.cleared = True


def test_bar_restarts_for_each_problem_and_ends_full():
    bar = _Bar()
    observe = GapBar(bar)
    for gap in (None, 1.0, 0.1, 0.5, 1e-4):
        observe(gap, 1e-3)
    assert bar.n == 100 and bar.desc == "train (problem 1)" and bar.cleared
    observe(None, 1e-3)
    assert bar.n == 0 and bar.desc == "train (problem 2)"
    observe(2.0, 1e-3)
    observe(np.sqrt(2.0 * 1e-3), 1e-3)
    assert bar.n == pytest.approx(50, abs=1)
