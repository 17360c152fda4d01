"""Jackknife+ intervals of kernel ridge at N = 5,000: svmkit's, from the exact leave-one-out
fits (`fit_conformalize`, no refit), against MAPIE's (`CrossConformalRegressor`, cv=LeaveOneOut,
method='plus') around scikit-learn's KernelRidge, which refits N times.

Data: a fixed random 5,000 rows of cadata (features standardised, target in 10⁵ $) for training
and 200 other rows for the intervals; RBF kernel, alpha = 0.5, gamma = 0.2, coverage 0.9.

MAPIE's N refits at N = 5,000 take hours on two cores: it is timed on its first R = `--refits`
leave-one-out folds (after one untimed warm-up run), which fit R + 1 models (the folds' and one
on every row) and give the intervals from them, and that time is extrapolated linearly in the
fits to the N + 1 of the whole run, T(R)·(N + 1)/(R + 1), printed as an extrapolation. That the intervals are the same is checked at full leave-one-out
on the first `--check-rows` rows, where MAPIE runs whole.

    python benchmarks/bench_explain_intervals.py [--n 5000] [--refits 12] [--check-rows 300] [--data DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import BaseCrossValidator, LeaveOneOut

import svmkit

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ALPHA, GAMMA, COVERAGE, TEST_ROWS = 0.5, 0.2, 0.9, 200


class FirstFolds(BaseCrossValidator):
    """The first `count` folds of leave-one-out, to time MAPIE's refits on a part of them."""

    def __init__(self, count):
        self.count = count

    def split(self, X, y=None, groups=None):
        for k, fold in enumerate(LeaveOneOut().split(X)):
            if k == self.count:
                return
            yield fold

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.count


def cadata(n, data_dir):
    """n training rows and TEST_ROWS others of cadata, drawn once at random (seed 0)."""
    path = Path(data_dir) / "derived" / "cadata"
    if not path.exists():
        path = Path("/work/shared/data/derived/cadata")
    X, y = load_svmlight_file(str(path))
    rows = np.random.default_rng(0).choice(X.shape[0], n + TEST_ROWS, replace=False)
    X = X[rows].toarray()
    X = (X - X.mean(0)) / X.std(0)
    y = y[rows] / 1e5
    return X[:n], y[:n], X[n:]


def _svmkit(X, y, Xt):
    start = time.perf_counter()
    bounds = svmkit.KernelRidge(alpha=ALPHA, kernel="rbf", gamma=GAMMA).fit_conformalize(X, y) \
        .predict_interval(Xt, COVERAGE, method="jackknife+")
    return bounds, time.perf_counter() - start


def _mapie(X, y, Xt, cv):
    from mapie.regression import CrossConformalRegressor

    start = time.perf_counter()
    mapie = CrossConformalRegressor(KernelRidge(alpha=ALPHA, kernel="rbf", gamma=GAMMA), confidence_level=COVERAGE,
                                    method="plus", cv=cv).fit_conformalize(X, y)
    bounds = mapie.predict_interval(Xt)[1][:, :, 0]
    return bounds, time.perf_counter() - start


def jackknife_case(n=5_000, refits=12, check_rows=300, data_dir=DATA):
    """The printed rows: the intervals' agreement at `check_rows` rows (full leave-one-out on
    both), then svmkit's time at n against MAPIE's, extrapolated from `refits` of its folds (at
    least 10: MAPIE needs more scores than 1 / (1 − coverage))."""
    X, y, Xt = cadata(n, data_dir)
    ours, _ = _svmkit(X[:check_rows], y[:check_rows], Xt)
    theirs, mapie_small = _mapie(X[:check_rows], y[:check_rows], Xt, LeaveOneOut())
    rows = [f"same intervals at N = {check_rows} (MAPIE's {check_rows} refits, {mapie_small:.1f} s): "
            f"max |svmkit − MAPIE| = {np.abs(ours - theirs).max():.2e}"]
    _, ours_s = _svmkit(X, y, Xt)
    _mapie(X, y, Xt, FirstFolds(refits))  # warm-up: imports, thread pools, first large allocations
    _, part_s = _mapie(X, y, Xt, FirstFolds(refits))
    mapie_s = part_s * (n + 1) / (refits + 1)
    rows += [f"svmkit jackknife+ N = {n}, {TEST_ROWS} intervals: {ours_s:.2f} s (fit_conformalize + predict_interval)",
             f"MAPIE jackknife+ N = {n}: {mapie_s:.0f} s EXTRAPOLATED linearly from {refits} of its {n} refits "
             f"({part_s:.1f} s for {refits + 1} fits × {n + 1} / {refits + 1})",
             f"speed-up: {mapie_s / ours_s:.0f}×"]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5_000)
    parser.add_argument("--refits", type=int, default=12)
    parser.add_argument("--check-rows", type=int, default=300)
    parser.add_argument("--data", default=str(DATA))
    args = parser.parse_args()
    for row in jackknife_case(args.n, args.refits, args.check_rows, args.data):
        print(row)


if __name__ == "__main__":
    main()
