"""
Learning from a stream: partial_fit against a refit
===================================================

a9a (32,561 rows) arrives in 10 batches. After each batch, ``partial_fit`` adds it to an SVC
that keeps every row seen, warm-starting the SMO from the previous α with the new rows' α at 0,
and a fresh SVC is fitted on all the rows seen so far. The dual is a convex QP, so the two
reach the same optimum (Cauwenberghs & Poggio 2000): their objectives agree to the solver's
tolerance, and they predict the same labels on a9a's test split (16,281 rows). γ is fixed to
the value ``gamma='scale'`` gives on all of a9a, so that every model has the same kernel, and
``tol=1e-5``: at the default 1e-3 a test point whose decision value lies within the tolerance
of 0 can fall on either side.

The first call is a fit. Each later batch is a tenth of a9a: as many rows as were seen before
it at the second call, a ninth of them at the last. The start is then far from the new
optimum, and its gradient needs the kernel between every new row and every support vector,
so the update's time is close to the refit's and falls below it as the batch becomes a smaller
share of the rows seen. ``benchmarks/bench_update.py`` times the case an update is made for,
1 % of the rows added (see :doc:`/guide/updates`).
"""

import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import svmkit
from svmkit.io.data import load_svmlight

# The benchmark data sets lie in shared/data beside the repository (as for benchmarks/); the
# script runs from the repository root or from examples/, where the documentation runs it.
ROOT = (Path(".") if Path("examples").is_dir() else Path("..")).resolve()
DATA = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data" / "a9a").is_file()), None)
if DATA is None:
    raise FileNotFoundError(f"a9a and a9a.t are read from shared/data in a folder above {ROOT}")
X, y = load_svmlight(DATA / "a9a")
X_test, y_test = load_svmlight(DATA / "a9a.t", n_features=X.shape[1])
gamma = 1.0 / (X.shape[1] * (X.multiply(X).mean() - X.mean() ** 2))  # 'scale' on all of a9a

TOL = 1e-5  # the solver's stopping tolerance (the default is 1e-3)
batches = np.array_split(np.arange(X.shape[0]), 10)
model = svmkit.SVC(C=1.0, gamma=gamma, tol=TOL)
rows = []
for batch in batches:
    start = time.perf_counter()
    model.partial_fit(X[batch], y[batch], classes=[-1, 1])
    update_s = time.perf_counter() - start
    seen = batch[-1] + 1
    start = time.perf_counter()
    refit = svmkit.SVC(C=1.0, gamma=gamma, tol=TOL).fit(X[:seen], y[:seen])
    refit_s = time.perf_counter() - start
    difference = float(np.abs(model.objective_ - refit.objective_).max() / np.abs(refit.objective_).max())
    differing = int(np.count_nonzero(model.predict(X_test) != refit.predict(X_test)))
    rows.append((seen, update_s, refit_s, difference, differing))

print(f"{'rows seen':>9}  {'update s':>8}  {'refit s':>7}  {'update/refit':>12}  "
      f"{'rel. diff. objective':>20}  {'test predictions differing':>26}")
for seen, update_s, refit_s, difference, differing in rows:
    print(f"{seen:>9}  {update_s:>8.2f}  {refit_s:>7.2f}  {update_s / refit_s:>12.2f}  {difference:>20.1e}  "
          f"{differing:>15} of {y_test.size}")

seen, update_s, refit_s, difference, _ = map(np.array, zip(*rows))
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
width = 0.4 * (seen[1] - seen[0])
axes[0].bar(seen - width / 2, refit_s, width, label="refit on all rows seen")
axes[0].bar(seen + width / 2, update_s, width, label="partial_fit of the batch")
axes[0].set_xlabel("rows seen")
axes[0].set_ylabel("seconds")
axes[0].set_title("a9a in 10 batches: time of each step")
axes[0].legend()
axes[1].semilogy(seen, difference, "o-")
axes[1].set_xlabel("rows seen")
axes[1].set_ylabel("largest relative difference of objective_")
axes[1].set_title(f"partial_fit against the refit (tol = {TOL:g})")
plt.show()
