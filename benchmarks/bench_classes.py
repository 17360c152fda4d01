"""Time one-vs-one SVC with many classes: svmkit beside scikit-learn, and the memory of
svmkit's multinomial KernelLogisticRegression with many classes.

    python benchmarks/bench_classes.py [--cases svc200,svc1000,proba100,proba200,klr200] [--repeat 1]

Data: synthetic, 20 features; class c's rows are N(μ_c, I) with centres μ_c ~ N(0, 3²·I), so
that the classes lie apart but overlap a little; the test set is drawn the same way, as many
rows as the training set, from another seed. Every SVC is RBF with C = 1 and gamma='scale'.

- svcK: K classes × 2 training rows each (K·(K−1)/2 pairs of 4 rows): fit, predict and
  decision_function (the 'ovr' shape, which needs every pair's value) on the test set.
- probaK: K classes × 10 training rows each, probability=True (Platt's sigmoid per pair from
  an internal 5-fold cross-validation, which needs a few rows of each class in every fold:
  10 rows per class, 100 and 200 classes, rather than the 2 rows of the svc cases); the
  predict column times predict_proba.
- klr200: svmkit's KernelLogisticRegression (multinomial, exact Newton), 200 classes × 3
  rows = 600 training rows: fit seconds and the process's peak resident memory (scikit-learn
  has no kernel logistic regression; its row is skipped).

Each system runs in its own process (`workers.run_worker`), whose peak resident memory
(ru_maxrss) is reported beside its times; each measurement is the fastest of `--repeat` rounds
in alternating order. The ratio column is scikit-learn's fit seconds over this system's.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import time
import warnings

import numpy as np

from _results import write
from workers import best_of_rounds, print_rows, print_runs, run_worker  # beside this script, whose folder is on sys.path

#: case → (model, classes, training rows per class)
CASES = {"svc200": ("svc", 200, 2), "svc1000": ("svc", 1000, 2), "proba100": ("proba", 100, 10),
         "proba200": ("proba", 200, 10), "klr200": ("klr", 200, 3)}
SYSTEMS = ("svmkit", "scikit-learn")
N_FEATURES = 20


def make_data(n_classes, per_class, seed):
    """(X, y): `per_class` rows of each class, N(μ_c, I) around centres μ_c ~ N(0, 9·I) (seed 0)."""
    centres = np.random.default_rng(0).normal(scale=3.0, size=(n_classes, N_FEATURES))
    y = np.repeat(np.arange(n_classes), per_class)
    X = centres[y] + np.random.default_rng(seed).normal(size=(y.size, N_FEATURES))
    return X, y


def _timed(f, *args):
    t = time.perf_counter()
    out = f(*args)
    return time.perf_counter() - t, out


def run(case, system):
    kind, n_classes, per_class = CASES[case]
    X, y = make_data(n_classes, per_class, 1)
    Xt, yt = make_data(n_classes, per_class, 2)
    if system == "svmkit":
        import svmkit

        svmkit.SVC(probability=True).fit(*make_data(3, 10, 3))  # loads the compiled loops, untimed
        model = (svmkit.KernelLogisticRegression() if kind == "klr"
                 else svmkit.SVC(C=1.0, gamma="scale", probability=kind == "proba"))
    elif kind == "klr":
        return {"error": "no kernel logistic regression"}
    else:
        from sklearn.svm import SVC

        model = SVC(C=1.0, gamma="scale", probability=kind == "proba", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # scikit-learn 1.9 deprecates SVC(probability=True)
        fit_s, _ = _timed(model.fit, X, y)
        predict_s, pred = _timed(model.predict, Xt)
        if kind == "proba":
            second_s, _ = _timed(model.predict_proba, Xt)
        else:
            second_s, _ = _timed(model.decision_function, Xt)
    return {"seconds": fit_s, "predict_s": predict_s, "second_s": second_s,
            "accuracy": float(np.mean(pred == yt)),
            "n_sv": int(len(model.support_)) if hasattr(model, "n_support_") else None,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def in_process(case, system, timeout):
    try:
        return run_worker(__file__, (case, system), timeout=timeout)[0]
    except Exception as e:  # a timeout is a result, not the end of the run
        return {"error": f"{type(e).__name__} after {timeout} s"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds per measurement, in alternating order; the fastest is printed")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per worker")
    parser.add_argument("--worker", nargs=2)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run(*args.worker)))
        return
    print(f"# machine: {platform.machine()}, Python {platform.python_version()}; RBF, C=1, gamma='scale'")
    print("| case | system | fit s | predict s | decision_function / predict_proba s | accuracy | #SV | "
          "peak RSS MB | sklearn/this fit |")
    print("|---|---|---|---|---|---|---|---|---|")
    table = []
    for case in args.cases.split(","):
        systems = SYSTEMS[:1] if CASES[case][0] == "klr" else SYSTEMS
        results = best_of_rounds(lambda system: in_process(case, system, args.timeout), systems, args.repeat)
        table += print_rows(case, results, "seconds",
                            lambda r: f"{r['seconds']:.2f} | {r['predict_s']:.2f} | {r['second_s']:.2f} | "
                                      f"{r['accuracy']:.3f} | {r['n_sv'] if r['n_sv'] is not None else '–'} | "
                                      f"{r['peak_rss_mb']:.0f}", 7)
        print_runs(results)
    write("bench_classes", table,
          notes="One-vs-one SVC with many classes (synthetic, 20 features, 2 rows per class; 10 per class with "
                "probability=True) and multinomial KLR's memory (200 classes × 3 rows); `speedup` is "
                "scikit-learn's fit seconds over this system's.",
          plots=[{"kind": "bars", "value": "speedup", "label": ["set", "system"], "reference": 1, "xscale": "log",
                  "xlabel": "scikit-learn fit s / this system's"}])


if __name__ == "__main__":
    main()
