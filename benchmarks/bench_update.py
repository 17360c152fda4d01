"""Time the exact updates (`partial_fit`, `forget`) beside a refit on the same rows: SVC (RBF,
C = 1, gamma='scale' resolved on the training rows, tol 1e-3, as bench_svc.py), LinearSVC
(C = 1, its default dual='auto') and KernelRidge (bench_ridge.py's data and RBF, solver='cholesky'):

- a9a, add 1 %: a fit on the first 99 % of the rows, then `partial_fit` of the last 1 %;
- a9a, forget 1 %: a fit on every row, then `forget` of 1 % of them, drawn at random;
- w8a, add 1 %: as for a9a;
- KernelRidge, N = 10,000: add 100 rows, and forget 100 of N + 100.

    python benchmarks/bench_update.py [--cases a9a-add,a9a-forget,w8a-add,linear-a9a-add,ridge-add,ridge-forget]
                                      [--data DIR] [--device cuda]

Prints per case the refit's seconds and iterations (`n_iter_`: SMO pair updates summed over the
class pairs, or the linear solver's passes) beside the update's, their ratios, and the
objectives of both (equal to the solver's tolerance). With --device cuda the SVC cases fit,
update and refit on the GPU (results in bench_update_cuda.json).
"""

from __future__ import annotations

import argparse
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

import svmkit
from svmkit.io.data import load_svmlight

from _results import write  # beside this script, whose folder is on sys.path
from bench_ridge import ALPHA, GAMMA, data as ridge_data

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: Share of the rows added or forgotten.
SHARE = 0.01
#: KernelRidge's rows, and the rows added or forgotten.
RIDGE_N, RIDGE_M = 10_000, 100


def _scale_gamma(X):
    var = (X.multiply(X).mean() - X.mean() ** 2) if sp.issparse(X) else X.var()
    return float(1.0 / (X.shape[1] * var))


def _timed(fn):
    start = time.perf_counter()
    model = fn()
    return model, time.perf_counter() - start


def _outcome(model):
    """What the row reads of a model (its objectives, iterations and dual coefficients), kept
    so that the model itself, and the memory it keeps for its next update (the closed forms'
    factor, the SMO's row cache), can go before the refit, which then runs as it would without
    the update beside it."""
    return SimpleNamespace(**{name: getattr(model, name) for name in ("objective_", "n_iter_", "dual_coef_")
                              if hasattr(model, name)})


def _row(case, refit, refit_s, update, update_s):
    iters = int(np.sum(getattr(refit, "n_iter_", 0))), int(np.sum(getattr(update, "n_iter_", 0)))  # none: a factor
    return {"case": case, "refit s": round(refit_s, 3), "update s": round(update_s, 3),
            "time update/refit": round(update_s / refit_s, 3), "refit iterations": iters[0],
            "update iterations": iters[1], "iterations update/refit": round(iters[1] / max(iters[0], 1), 3),
            "largest relative difference": _difference(refit, update)}


def _difference(refit, update):
    """The largest relative difference of the two models' dual coefficients (their objectives'
    where the models have one per problem)."""
    if hasattr(refit, "objective_"):
        a, b = np.ravel(update.objective_), np.ravel(refit.objective_)
    else:
        a, b = np.ravel(update.dual_coef_), np.ravel(refit.dual_coef_)
    return float(np.abs(a - b).max() / np.abs(b).max())


#: The options of the SVC cases (`--device`).
SVC_OPTIONS = svmkit.Options()


def svc(X):
    """The SVC of bench_svc.py, γ resolved on all of X as 'scale' would."""
    gamma = _scale_gamma(X)
    return lambda **keep: svmkit.SVC(C=1.0, gamma=gamma, options=SVC_OPTIONS, **keep)


def linear_svc(X):
    return lambda **keep: svmkit.LinearSVC(C=1.0, random_state=0, **keep)


def kernel_ridge(X):
    return lambda **keep: svmkit.KernelRidge(kernel="rbf", alpha=ALPHA, gamma=GAMMA, solver="cholesky", **keep)


def _changed(n):
    """The rows added or forgotten of n: 1 %, or KernelRidge's 100."""
    return RIDGE_M if n == RIDGE_N + RIDGE_M else int(round(SHARE * n))


def add(case, X, y, model_of):
    """A fit on all rows but the last few (`_changed`), `partial_fit` of those, against a fit on all."""
    make = model_of(X)
    cut = X.shape[0] - _changed(X.shape[0])
    model = make(keep_data=True).fit(X[:cut], y[:cut])
    fitted, update_s = _timed(partial(model.partial_fit, X[cut:], y[cut:]))
    update = _outcome(fitted)
    del model, fitted
    refit, refit_s = _timed(lambda: make().fit(X, y))
    return _row(case, refit, refit_s, update, update_s)


def forget(case, X, y, model_of):
    """A fit on every row, `forget` of a few of them (`_changed`, drawn at random), against a fit on the rest."""
    make = model_of(X)
    gone = np.sort(np.random.default_rng(0).choice(X.shape[0], _changed(X.shape[0]), replace=False))
    keep = np.setdiff1d(np.arange(X.shape[0]), gone)
    model = make(keep_data=True).fit(X, y)
    fitted, update_s = _timed(partial(model.forget, gone))
    update = _outcome(fitted)
    del model, fitted
    refit, refit_s = _timed(lambda: make().fit(X[keep], y[keep]))
    return _row(case, refit, refit_s, update, update_s)


CASES = {"a9a-add": (add, "a9a", svc), "a9a-forget": (forget, "a9a", svc), "w8a-add": (add, "w8a", svc),
         "linear-a9a-add": (add, "a9a", linear_svc), "ridge-add": (add, None, kernel_ridge),
         "ridge-forget": (forget, None, kernel_ridge)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    global SVC_OPTIONS
    SVC_OPTIONS = svmkit.Options(device=args.device)
    rows = []
    for case in args.cases.split(","):
        run, name, model_of = CASES[case]
        X, y = ridge_data(RIDGE_N + RIDGE_M)[:2] if name is None else load_svmlight(Path(args.data) / name)
        rows.append(run(case, X, y, model_of))
        print("  ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    write("bench_update" if args.device == "cpu" else "bench_update_cuda", rows, notes="Seconds and iterations of an exact update (partial_fit, forget) "
          "against a refit on the same rows; the goal is an update at most 10 % of a refit.")


if __name__ == "__main__":
    main()
