"""Time a (C, γ) grid search: svmkit's SVMSearchCV (joblib and Dask backends) beside
scikit-learn's GridSearchCV(SVC, n_jobs=2), the same with scikit-learn-intelex's SVC, and
liquidSVM on the same grid and with its own default selection; and the same search of a
StandardScaler + SVC Pipeline on the unscaled svmguide1, SVMSearchCV against GridSearchCV.

    python benchmarks/bench_grid.py [--sets heart,svmguide1,a9a] [--systems svmkit,svmkit-loky,scikit-learn] [--timeout 1800]

LIBSVM grid.py's RBF grid (log2 C −5…15 step 2 × log2 γ 3…−15 step −2, 110 cells), 5-fold
CV, tol 1e-3, the same stratified folds for every system that takes them (liquidSVM makes its
own). On 'svmguide1 (pipeline)' each system searches make_pipeline(StandardScaler(), its SVC),
the scaler fitted on each fold's training rows (liquidSVM, which takes no Pipeline, is left
out). Each (data set, system) runs in its own process, its libraries loaded before the clock
(svmkit: a tiny fit loads its compiled loops); svmkit runs on joblib threads, and as
`svmkit-loky` / `svmkit-dask` on joblib processes / a local Dask cluster, whose start is
timed. Prints time, the best cell, its CV accuracy, the test accuracy of the refitted model, and GridSearchCV's time over each system's.
svmkit chooses by best CV score here (prefer_fewer_sv=False), as the others do.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time

import numpy as np

from _results import write
from workers import data_dir, print_rows, run_worker  # beside this script, whose folder is on sys.path

DATA = data_dir()
SYSTEMS = ("svmkit", "svmkit-loky", "svmkit-dask", "scikit-learn", "sklearn-intelex", "liquidSVM-grid", "liquidSVM-default")
#: The set searched as a StandardScaler + SVC Pipeline, by the systems that take one.
PIPELINE = "svmguide1 (pipeline)"
C_VALUES = [2.0**k for k in range(-5, 16, 2)]
GAMMAS = [2.0**k for k in range(3, -16, -2)]


def load(name):
    from sklearn.model_selection import train_test_split

    import svmkit

    if name == "heart_scale":
        X, y = svmkit.load_svmlight(DATA / "heart_scale", dense=True)
        return train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    if name == "svmguide1 (scaled)":
        X, y = svmkit.load_svmlight(DATA / "svmguide1", dense=True)
        Xt, yt = svmkit.load_svmlight(DATA / "svmguide1.t", dense=True)
        scaler = svmkit.LibsvmScaler().fit(X)
        return scaler.transform(X), scaler.transform(Xt), y, yt
    if name == PIPELINE:
        X, y = svmkit.load_svmlight(DATA / "svmguide1", dense=True)
        Xt, yt = svmkit.load_svmlight(DATA / "svmguide1.t", dense=True)
        return X, Xt, y, yt
    X, y = svmkit.load_svmlight(DATA / "a9a", n_features=123)
    Xt, yt = svmkit.load_svmlight(DATA / "a9a.t", n_features=123)
    return X[:5000], Xt, y[:5000], yt


SETS = ("heart_scale", "svmguide1 (scaled)", PIPELINE, "a9a 5k")


def folds(y):
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(len(y)), y))


def _model(svc, pipeline):
    """`svc`, or make_pipeline(StandardScaler(), svc), and its (C, γ) grid."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if not pipeline:
        return svc, {"C": C_VALUES, "gamma": GAMMAS}
    return make_pipeline(StandardScaler(), svc), {"svc__C": C_VALUES, "svc__gamma": GAMMAS}


def _searcher(system, ytr, pipeline=False):
    """A function running `system`'s search on (X, y) (of `_model(its SVC, pipeline)`) and
    returning (model, best cell, CV score), with its libraries imported (and svmkit's compiled
    loops loaded) before the clock, as a peer's library is loaded before its fit."""
    if system.startswith("svmkit"):
        import svmkit
        from svmkit.model_selection import SVMSearchCV

        svmkit.SVC().fit(np.r_[np.eye(3), -np.eye(3)], [0, 0, 0, 1, 1, 1])

        def run(X, y):
            search = SVMSearchCV(*_model(svmkit.SVC(), pipeline), cv=folds(ytr), n_jobs=2, prefer_fewer_sv=False,
                                 backend=system.partition("-")[2] or "threading").fit(X, y)
            return search.best_estimator_, search.best_params_, search.best_score_
    elif system in ("scikit-learn", "sklearn-intelex"):
        if system == "sklearn-intelex":
            from sklearnex import patch_sklearn

            patch_sklearn(verbose=False)
        from sklearn.model_selection import GridSearchCV
        from sklearn.svm import SVC

        def run(X, y):
            search = GridSearchCV(*_model(SVC(cache_size=200), pipeline), cv=folds(ytr), n_jobs=2)
            search.fit(X, y)
            return search.best_estimator_, search.best_params_, search.best_score_
    else:
        import sysconfig

        # liquidSVM 1.0.1 finds its library by the 'SO' suffix, which Python 3.11 no longer sets
        sysconfig.get_config_vars().setdefault("SO", sysconfig.get_config_var("EXT_SUFFIX"))
        from liquidSVM import mcSVM

        kwargs = dict(folds=5, threads=2, display=0)
        if system == "liquidSVM-grid":
            # liquidSVM's kernel is exp(−‖x − x'‖² / γ²): its γ is 1/√(LIBSVM's γ)
            kwargs.update(gammas=[1 / np.sqrt(g) for g in GAMMAS], c_values=C_VALUES)

        def run(X, y):
            return mcSVM(X.toarray() if hasattr(X, "toarray") else X, y, **kwargs), "(its own)", float("nan")
    return run


def run_system(system, name):
    Xtr, Xte, ytr, yte = load(name)
    search = _searcher(system, ytr, pipeline=name == PIPELINE)
    t0 = time.perf_counter()
    model, best, cv = search(Xtr, ytr)
    seconds = time.perf_counter() - t0
    if system.startswith("liquidSVM"):
        Xte = Xte.toarray() if hasattr(Xte, "toarray") else Xte
    acc = float(np.mean(np.asarray(model.predict(Xte)).ravel() == yte))
    return {"seconds": seconds, "best": str(best), "cv": float(cv), "test": 100 * acc}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(run_system(args.worker[1], args.worker[0])))
        return
    sets = [s for s in SETS if any(k in s for k in args.sets.split(","))]
    systems = [s for s in SYSTEMS if s in args.systems.split(",")]
    print(f"# machine: {platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}; "
          "110-cell grid, 5-fold CV")
    print("| data set | system | search s | best cell | CV accuracy % | test accuracy % | GridSearchCV s / this |")
    print("|---|---|---|---|---|---|---|")
    table = []
    for name in sets:
        rows = {}
        for system in systems:
            if name == PIPELINE and system.startswith("liquidSVM"):
                continue
            try:
                rows[system] = run_worker(__file__, (name, system), timeout=args.timeout)[0]
            except subprocess.TimeoutExpired:
                rows[system] = {"error": f"over {args.timeout:g} s"}
        table += print_rows(name, rows, "seconds",
                            lambda r: f"{r['seconds']:.2f} | {r['best']} | {100 * r['cv']:.2f} | {r['test']:.2f}", 4)
    write("bench_grid", table, notes="grid.py's 110-cell grid with 5-fold CV; `speedup` is GridSearchCV's seconds over "
          "this system's.", plots=[{"kind": "bars", "value": "speedup", "label": ["set", "system"], "reference": 1,
                                    "xlabel": "GridSearchCV s / this system's"}])


if __name__ == "__main__":
    main()
