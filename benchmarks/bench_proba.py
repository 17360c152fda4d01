"""Time probability estimates: svmkit's SVC(probability=True) beside scikit-learn's, and
svmkit's KernelLogisticRegression (exact Newton and Nyström) beside scikit-learn's
LogisticRegression on Nystroem features, on a9a and w8a.

    python benchmarks/bench_proba.py [--sets a9a,w8a] [--rows 10000] [--components 1000] [--repeat 2]

Every system trains on the first `rows` rows of the training file (the exact models' N × N
kernel and scikit-learn's SVC set the size) and is scored on the held-out file (a9a.t; w8a's
last 10,000 rows, which the training rows never reach): fit seconds, log-loss, Brier score
(mean over rows of Σ_classes (p − 1[y = class])²), accuracy and, for the SVMs, #SV. Each system
runs in its own process, warmed up as in bench_svc.py (2 GB of memory touched; svmkit's compiled
loops loaded by small fits of SVC(probability=True) and KLR); each measurement is the fastest of
`--repeat` rounds in alternating order.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from _results import write
from workers import best_of_rounds, print_rows, print_runs, run_worker  # beside this script, whose folder is on sys.path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: (C, γ) of the SVMs and of KLR per set (RBF); LIBSVM's guide values for these sets.
SETTINGS = {"a9a": {"C": 1.0, "gamma": 0.05, "features": 123},
            "w8a": {"C": 8.0, "gamma": 0.03, "features": 300}}
SYSTEMS = ("svmkit SVC(probability)", "scikit-learn SVC(probability)", "svmkit KLR newton",
           "svmkit KLR nystrom", "scikit-learn Nystroem+LogisticRegression")


def load(name, rows):
    from sklearn.datasets import load_svmlight_file

    n_features = SETTINGS[name]["features"]
    X, y = load_svmlight_file(str(DATA / name), n_features=n_features)
    if name == "a9a":
        Xt, yt = load_svmlight_file(str(DATA / "a9a.t"), n_features=n_features)
    else:
        # w8a's rows come grouped: a fixed shuffle, then the last 10,000 are held out
        order = np.random.default_rng(0).permutation(X.shape[0])
        X, y = X[order], y[order]
        X, y, Xt, yt = X[:-10000], y[:-10000], X[-10000:], y[-10000:]
    # scikit-learn's SVC takes CSR with 32-bit indices only
    X, Xt = (sp.csr_matrix((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)), shape=A.shape)
             for A in (X[:rows], Xt))
    return X, y[:rows], Xt, yt


def run(name, system, rows, components):
    X, y, Xt, yt = load(name, rows)
    s = SETTINGS[name]
    import svmkit
    from bench_svc import warm_up
    from sklearn.datasets import make_classification
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC as SKSVC

    warm_up(system.split()[0])
    if system.startswith("svmkit"):
        Xw, yw = make_classification(500, 10, random_state=0)
        svmkit.SVC(probability=True).fit(Xw, yw)
        svmkit.KernelLogisticRegression().fit(Xw, yw)
    models = {
        "svmkit SVC(probability)": lambda: svmkit.SVC(C=s["C"], gamma=s["gamma"], probability=True),
        "scikit-learn SVC(probability)": lambda: SKSVC(C=s["C"], gamma=s["gamma"], probability=True,
                                                       random_state=0, cache_size=1024),
        "svmkit KLR newton": lambda: svmkit.KernelLogisticRegression(C=s["C"], gamma=s["gamma"]),
        "svmkit KLR nystrom": lambda: svmkit.KernelLogisticRegression(C=s["C"], gamma=s["gamma"], solver="nystrom",
                                                                      n_components=components, random_state=0),
        "scikit-learn Nystroem+LogisticRegression": lambda: make_pipeline(
            Nystroem(gamma=s["gamma"], n_components=components, random_state=0),
            LogisticRegression(C=s["C"], max_iter=1000)),
    }
    model = models[system]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # scikit-learn 1.9 deprecates SVC(probability=True)
        t0 = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - t0
        proba = model.predict_proba(Xt)
    classes = model.classes_
    onehot = yt[:, None] == classes[None, :]
    p = np.clip(proba, 1e-15, 1)
    out = {"seconds": seconds, "log_loss": float(-np.mean(np.log(p[onehot]))),
           "brier": float(np.mean(np.sum((proba - onehot) ** 2, axis=1))),
           "accuracy": float(np.mean(model.predict(Xt) == yt))}
    if hasattr(model, "support_") and "SVC" in system:
        out["n_sv"] = int(len(model.support_))
    return out


def in_process(name, system, rows, components):
    return run_worker(__file__, (name, system, rows, components), timeout=3600)[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="a9a,w8a")
    parser.add_argument("--rows", type=int, default=10000)
    parser.add_argument("--components", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2,
                        help="rounds per measurement, in alternating order; the fastest is printed")
    parser.add_argument("--worker", nargs=4)
    args = parser.parse_args()
    if args.worker:
        name, system, rows, m = args.worker
        print(json.dumps(run(name, system, int(rows), int(m))))
        return
    print(f"# machine: {platform.machine()}, Python {platform.python_version()}; {args.rows} training rows, "
          f"Nyström M={args.components}")
    print("| set | system | fit s | log-loss | Brier | accuracy | #SV | vs scikit-learn SVC |")
    print("|---|---|---|---|---|---|---|---|")
    table = []
    for name in args.sets.split(","):
        results = best_of_rounds(lambda system: in_process(name, system, args.rows, args.components), SYSTEMS,
                                 args.repeat)
        table += print_rows(name, results, "seconds",
                   lambda r: f"{r['seconds']:.2f} | {r['log_loss']:.4f} | {r['brier']:.4f} | {r['accuracy']:.4f} | "
                             f"{r.get('n_sv', '–')}", 5, reference="scikit-learn SVC(probability)")
        print_runs(results)
    write("bench_proba", table, notes="Probability models: fit seconds, log-loss, Brier score and accuracy on held-out "
          "rows; `speedup` is scikit-learn SVC(probability=True)'s seconds over this system's.",
          plots=[{"kind": "bars", "value": "speedup", "label": ["set", "system"], "reference": 1, "xscale": "log",
                  "xlabel": "scikit-learn SVC(probability) s / this system's"},
                 {"kind": "bars", "value": "log_loss", "label": ["set", "system"], "xlabel": "held-out log-loss"}])


if __name__ == "__main__":
    main()
