"""Time svmkit's exact Shapley values (`svmkit.inspection.shapley_values`) beside shap's explainers:

- exact-12: an RBF SVC (C = 1, gamma='scale') on wine's first 12 features (standardised, three
  classes, so three one-vs-one decision values), 20 rows explained over a background of 20
  rows: svmkit against shap.ExactExplainer (which evaluates the model on all 2^12 coalitions
  times the background), the largest difference of their values and the ratio of their times;
- large: 1,000 rows × 50 features of a stated synthetic problem (make_classification, 10
  informative features, 10 % of the labels flipped, an RBF SVC with C = 1, gamma='scale' fitted
  on 4,400 rows, which keeps about 2,000 support vectors): svmkit's exact values with the
  functional value and with the interventional value over a 20-row background (shap.kmeans's
  centres, equally weighted), against shap.KernelExplainer (nsamples = 2d + 2048, l1_reg=False:
  the full regression, no feature selection) on the first --kernel-rows rows, its time
  scaled to 1,000 rows, and its error against the exact values;
- jackknife-5000: jackknife+ intervals (coverage 0.9) of RBF kernel ridge (alpha = 0.5,
  gamma = 0.2) on a fixed random 5,000 rows of cadata (features standardised, target in 10⁵ $)
  for 200 other rows: svmkit's from the exact leave-one-out fits (`fit_conformalize`, no refit)
  against MAPIE's (`CrossConformalRegressor`, cv=LeaveOneOut, method='plus') around
  scikit-learn's KernelRidge, which refits N times. MAPIE's 5,000 refits take hours on two
  cores: it runs on its first --mapie-refits leave-one-out folds (after one untimed warm-up
  run), which fit R + 1 models (the folds' and one on every row) and give the intervals, and its
  time is extrapolated linearly in the fits to the N + 1 of the whole run, T(R)·(N + 1)/(R + 1)
  (the row says so). The intervals' largest difference is measured where both run the whole
  leave-one-out, on the first --check-rows rows.

    python benchmarks/bench_explain.py [--cases exact-12,large,jackknife-5000] [--kernel-rows 10]
                                       [--mapie-refits 12] [--check-rows 300] [--data DIR]

Prints one table; results in benchmarks/results/bench_explain.json.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np

from _results import write  # beside this script, whose folder is on sys.path

#: The large case: rows explained, features, training rows (about 2,000 support vectors), background rows.
LARGE_ROWS, LARGE_FEATURES, LARGE_TRAIN, BACKGROUND = 1000, 50, 4400, 20
#: The jackknife case: training rows, rows given intervals, kernel ridge's alpha and gamma, the coverage.
JACKKNIFE_N, INTERVAL_ROWS, RIDGE_ALPHA, RIDGE_GAMMA, COVERAGE = 5_000, 200, 0.5, 0.2, 0.9
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _row(case, system, value, rows, seconds, **extra):
    return {"case": case, "system": system, "value": value, "rows": rows, "seconds": seconds, **extra}


def exact_12(args):
    """svmkit against shap.ExactExplainer on an RBF SVC of 12 features, same background."""
    import shap
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    import svmkit
    from svmkit.inspection import shapley_values

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X[:, :12])
    model = svmkit.SVC(decision_function_shape="ovo").fit(X, y)
    rows, background = X[::9][:20], X[1::9][:20]
    ours, ours_s = _timed(lambda: shapley_values(model, rows, background))
    explainer = shap.ExactExplainer(model.decision_function,
                                    shap.maskers.Independent(background, max_samples=background.shape[0]))
    theirs, theirs_s = _timed(lambda: explainer(rows))
    error = float(np.abs(ours.values - theirs.values).max())
    return [_row("exact-12", "svmkit", "interventional", rows.shape[0], ours_s, max_abs_difference=error,
                 speedup=theirs_s / ours_s),
            _row("exact-12", "shap.ExactExplainer", "interventional", rows.shape[0], theirs_s,
                 max_abs_difference=error, speedup=1.0)]


def large(args):
    """Exact values at 1,000 × 50 with about 2,000 support vectors, against KernelExplainer."""
    import shap
    from sklearn.datasets import make_classification

    import svmkit
    from svmkit.inspection import shapley_values

    X, y = make_classification(n_samples=LARGE_TRAIN + LARGE_ROWS, n_features=LARGE_FEATURES, n_informative=10,
                               flip_y=0.1, random_state=0)
    model = svmkit.SVC().fit(X[:LARGE_TRAIN], y[:LARGE_TRAIN])
    rows = X[LARGE_TRAIN:]
    background = shap.kmeans(X[:LARGE_TRAIN], BACKGROUND).data
    n_sv = model.support_vectors_.shape[0]
    functional, functional_s = _timed(lambda: shapley_values(model, rows, value="functional"))
    exact, exact_s = _timed(lambda: shapley_values(model, rows, background))
    sub = rows[:args.kernel_rows]
    explainer = shap.KernelExplainer(model.decision_function, background)
    np.random.seed(0)
    sampled, sampled_s = _timed(lambda: explainer.shap_values(sub, nsamples=2 * LARGE_FEATURES + 2048, l1_reg=False,
                                                              silent=True))
    diff = np.asarray(sampled) - exact.values[:args.kernel_rows]
    relative = float(np.linalg.norm(diff) / np.linalg.norm(exact.values[:args.kernel_rows]))
    efficiency = float(np.abs(functional.values.sum(axis=1) + functional.base_values
                              - model.decision_function(rows)).max())
    return [_row("large", "svmkit", "functional", LARGE_ROWS, functional_s, support_vectors=n_sv,
                 efficiency_error=efficiency),
            _row("large", "svmkit", "interventional", LARGE_ROWS, exact_s, support_vectors=n_sv),
            _row("large", "shap.KernelExplainer", "interventional", sub.shape[0], sampled_s, support_vectors=n_sv,
                 seconds_per_1000_rows=sampled_s * LARGE_ROWS / sub.shape[0], max_abs_error=float(np.abs(diff).max()),
                 relative_error=relative, speedup=sampled_s * LARGE_ROWS / sub.shape[0] / exact_s)]


def _cadata(n, data_dir):
    """n training rows of cadata and INTERVAL_ROWS others, drawn once at random."""
    from sklearn.datasets import load_svmlight_file

    path = Path(data_dir) / "derived" / "cadata"
    X, y = load_svmlight_file(str(path))
    rows = np.random.default_rng(0).choice(X.shape[0], n + INTERVAL_ROWS, replace=False)
    X = X[rows].toarray()
    X = (X - X.mean(0)) / X.std(0)
    y = y[rows] / 1e5
    return X[:n], y[:n], X[n:]


def _svmkit_jackknife(X, y, Xt):
    import svmkit

    return _timed(lambda: svmkit.KernelRidge(alpha=RIDGE_ALPHA, kernel="rbf", gamma=RIDGE_GAMMA)
                  .fit_conformalize(X, y).predict_interval(Xt, COVERAGE, method="jackknife+"))


def _mapie_jackknife(X, y, Xt, folds=None):
    """MAPIE's jackknife+ around scikit-learn's KernelRidge: the whole leave-one-out, or its
    first `folds` folds."""
    from mapie.regression import CrossConformalRegressor
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import BaseCrossValidator, LeaveOneOut

    class FirstFolds(BaseCrossValidator):
        def split(self, X, y=None, groups=None):
            yield from itertools.islice(LeaveOneOut().split(X), folds)

        def get_n_splits(self, X=None, y=None, groups=None):
            return folds

    cv = LeaveOneOut() if folds is None else FirstFolds()
    return _timed(lambda: CrossConformalRegressor(KernelRidge(alpha=RIDGE_ALPHA, kernel="rbf", gamma=RIDGE_GAMMA),
                                                  confidence_level=COVERAGE, method="plus", cv=cv)
                  .fit_conformalize(X, y).predict_interval(Xt)[1][:, :, 0])


def jackknife_case(args):
    """svmkit's jackknife+ at N = 5,000 against MAPIE's, extrapolated from --mapie-refits of its
    folds (at least 10: MAPIE needs more scores than 1 / (1 − coverage)); the intervals'
    largest difference where both run whole (--check-rows)."""
    X, y, Xt = _cadata(JACKKNIFE_N, args.data)
    m = args.check_rows
    difference = float(np.abs(_svmkit_jackknife(X[:m], y[:m], Xt)[0] - _mapie_jackknife(X[:m], y[:m], Xt)[0]).max())
    _, ours_s = _svmkit_jackknife(X, y, Xt)
    _mapie_jackknife(X, y, Xt, args.mapie_refits)  # warm-up: imports, thread pools, first large allocations
    _, part_s = _mapie_jackknife(X, y, Xt, args.mapie_refits)
    mapie_s = part_s * (JACKKNIFE_N + 1) / (args.mapie_refits + 1)
    case = f"jackknife-{JACKKNIFE_N}"
    return [_row(case, "svmkit", "jackknife+", INTERVAL_ROWS, ours_s, max_abs_difference=difference,
                 speedup=mapie_s / ours_s),
            _row(case, "MAPIE", "jackknife+", INTERVAL_ROWS, mapie_s, max_abs_difference=difference, speedup=1.0,
                 extrapolated_from_refits=args.mapie_refits, seconds_measured=part_s)]


#: The cases, each a function of the parsed arguments returning its table rows: Shapley values,
#: then the conformal intervals.
CASES = {"exact-12": exact_12, "large": large, f"jackknife-{JACKKNIFE_N}": jackknife_case}

COLUMNS = ["case", "system", "value", "rows", "seconds", "support_vectors", "seconds_per_1000_rows",
           "max_abs_difference", "max_abs_error", "relative_error", "efficiency_error", "extrapolated_from_refits",
           "speedup"]


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--kernel-rows", type=int, default=10,
                        help="rows KernelExplainer explains in the large case (its time is scaled to 1,000)")
    parser.add_argument("--mapie-refits", type=int, default=12,
                        help="MAPIE's leave-one-out folds timed in the jackknife case (its time is extrapolated)")
    parser.add_argument("--check-rows", type=int, default=300,
                        help="rows on which the jackknife case compares the two systems' intervals whole")
    parser.add_argument("--data", default=str(DATA), help="the shared data folder (cadata in derived/)")
    args = parser.parse_args()
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    table = []
    for case in args.cases.split(","):
        for row in CASES[case](args):
            table.append(row)
            print("| " + " | ".join(_cell(row.get(c)) for c in COLUMNS) + " |", flush=True)
    write("bench_explain", table, columns=COLUMNS,
          notes="Exact Shapley values of RBF SVCs: `speedup` is the peer's seconds over svmkit's (KernelExplainer's "
                "scaled to 1,000 rows, against svmkit's interventional values); `max_abs_difference` svmkit against "
                "ExactExplainer; `max_abs_error` and `relative_error` (Frobenius) KernelExplainer against the exact "
                "values. jackknife-5000: seconds for 200 jackknife+ intervals of RBF kernel ridge on 5,000 cadata "
                "rows, MAPIE's extrapolated linearly from `extrapolated_from_refits` of its 5,000 refits "
                "(`seconds_measured`), `max_abs_difference` of the intervals where both run whole (300 rows).",
          plots=[{"kind": "bars", "value": "speedup", "label": ["case", "system", "value"], "reference": 1,
                  "xlabel": "the peer's seconds / svmkit's"}])


if __name__ == "__main__":
    main()
