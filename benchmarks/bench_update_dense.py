"""Time KernelRidge's exact updates against a full refit: add m rows (`partial_fit`, a bordered
Cholesky factor) and forget m rows (`forget`, its downdate), each beside a fit on the same rows.

    python benchmarks/bench_update_dense.py [--n 10000] [--m 100] [--loo both]

Data as benchmarks/bench_ridge.py makes it (x uniform in [−1, 1]^8, RBF γ = 0.5, λ = 1e-3).
Two refits: the default fit (loo=False: the float32 factor refined by CG, packed storage) and
the fit with loo=True (float64 factor and diag(H⁻¹)), which the update with loo=True equals.
The updated model is checked against the refit (largest relative difference of the coefficients
and of the LOO residuals). One round each.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import svmkit
from bench_ridge import ALPHA, GAMMA, data  # beside this script, whose folder is on sys.path


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _relative(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def run(n, m, loo):
    X, y, _, _ = data(n + m)
    params = dict(kernel="rbf", alpha=ALPHA, gamma=GAMMA, solver="cholesky")
    t_default, _ = _timed(lambda: svmkit.KernelRidge(**params).fit(X, y))
    t_refit, _ = _timed(lambda: svmkit.KernelRidge(**params, loo=loo).fit(X, y))
    t_first, model = _timed(lambda: svmkit.KernelRidge(**params, loo=loo, keep_data=True).fit(X[:n], y[:n]))
    t_add, _ = _timed(lambda: model.partial_fit(X[n:], y[n:]))
    gone = np.random.default_rng(1).choice(n + m, size=m, replace=False)
    t_forget, _ = _timed(lambda: model.forget(gone))
    keep = np.setdiff1d(np.arange(n + m), gone)
    ref_rest = svmkit.KernelRidge(**params, loo=loo).fit(X[keep], y[keep])
    print(f"| loo={loo} | {n} | {m} | {t_default:.2f} | {t_refit:.2f} | {t_first:.2f} | {t_add:.2f} "
          f"({100 * t_add / t_default:.1f} % / {100 * t_add / t_refit:.1f} %) | {t_forget:.2f} "
          f"({100 * t_forget / t_default:.1f} % / {100 * t_forget / t_refit:.1f} %) | "
          f"{_relative(model.dual_coef_, ref_rest.dual_coef_):.1e}"
          + (f" / {_relative(model.loo_residuals_, ref_rest.loo_residuals_):.1e}" if loo else "") + " |", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--m", type=int, default=100)
    parser.add_argument("--loo", choices=("false", "true", "both"), default="both")
    args = parser.parse_args()
    print(f"# KernelRidge RBF γ={GAMMA}, λ={ALPHA}, solver='cholesky'; seconds, and % of the default refit / "
          "of the refit with the same loo")
    print("| model | N | m | refit (loo=False) s | refit (same loo) s | first fit keep_data s | add m s (%) "
          "| forget m s (%) | max rel. diff vs refit (β / LOO) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for loo in {"false": (False,), "true": (True,), "both": (False, True)}[args.loo]:
        run(args.n, args.m, loo)


if __name__ == "__main__":
    main()
