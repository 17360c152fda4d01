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

from _results import write  # beside this script, whose folder is on sys.path

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
    """The rows, one per system: seconds for TEST_ROWS jackknife+ intervals at n (MAPIE's
    extrapolated from `refits` of its folds, at least 10: MAPIE needs more scores than
    1 / (1 − coverage)), and the largest difference between the two systems' intervals at
    `check_rows` rows, where both run the whole leave-one-out."""
    X, y, Xt = cadata(n, data_dir)
    ours, _ = _svmkit(X[:check_rows], y[:check_rows], Xt)
    theirs, _ = _mapie(X[:check_rows], y[:check_rows], Xt, LeaveOneOut())
    difference = float(np.abs(ours - theirs).max())
    _, ours_s = _svmkit(X, y, Xt)
    _mapie(X, y, Xt, FirstFolds(refits))  # warm-up: imports, thread pools, first large allocations
    _, part_s = _mapie(X, y, Xt, FirstFolds(refits))
    mapie_s = part_s * (n + 1) / (refits + 1)
    case = {"case": "KernelRidge jackknife+", "n": n, "intervals": TEST_ROWS, "check_rows": check_rows,
            "max_abs_difference": difference}
    return [{**case, "system": "svmkit", "seconds": ours_s, "speedup": mapie_s / ours_s,
             "how": "fit_conformalize + predict_interval, measured"},
            {**case, "system": "MAPIE", "seconds": mapie_s, "speedup": 1.0,
             "how": f"EXTRAPOLATED linearly from {refits} of its {n} refits: {part_s:.1f} s for {refits + 1} fits "
                    f"× {n + 1} / {refits + 1}"}]


def show(rows):
    """Print the rows as lines."""
    for row in rows:
        print(f"{row['case']} N = {row['n']}, {row['intervals']} intervals, {row['system']}: {row['seconds']:.2f} s "
              f"({row['how']}); speed-up {row['speedup']:.0f}×; max |svmkit − MAPIE| at N = {row['check_rows']}: "
              f"{row['max_abs_difference']:.2e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5_000)
    parser.add_argument("--refits", type=int, default=12)
    parser.add_argument("--check-rows", type=int, default=300)
    parser.add_argument("--data", default=str(DATA))
    args = parser.parse_args()
    rows = jackknife_case(args.n, args.refits, args.check_rows, args.data)
    show(rows)
    write("bench_explain_intervals", rows, notes="Seconds for 200 jackknife+ intervals of RBF kernel ridge on "
          "cadata rows: svmkit from its exact leave-one-out fits, MAPIE from N refits of scikit-learn's "
          "KernelRidge (extrapolated from a stated number of them); the intervals' largest difference where "
          "both run whole.", plots=[{"kind": "bars", "label": ["system"], "value": "seconds"}])


if __name__ == "__main__":
    main()
