"""
Conformal intervals: jackknife+, CV+, split and Laplace
========================================================

Four 90 % intervals around kernel models of a noisy sinc whose noise grows with :math:`|x|`:

- kernel ridge's **jackknife+** (Barber, Candès, Ramdas & Tibshirani 2021) from its exact
  leave-one-out fits: ``fit_conformalize`` keeps the block of M⁻¹ that gives every f₋ᵢ(x)
  without a refit;
- an SVR's **CV+** from five fold models, each warm-started from the full fit by ``forget``;
- the same SVR's **split conformal** interval, calibrated on 100 held-out rows;
- LIBSVM's **Laplace** interval (``probability=True``), which carries no coverage guarantee.

The conformal scores here are :math:`|y - f(x)|`, which do not look at x, so the intervals are about as
wide everywhere (split conformal's exactly): they cover the calm middle with room to spare and
the noisy ends less; their guarantee is marginal, over x, not at each x.
Each panel prints its coverage of 2,000 new points.
"""

import matplotlib.pyplot as plt
import numpy as np

import svmkit


def sample(n, rng):
    x = rng.uniform(-3, 3, n)
    return x[:, None], np.sinc(x) + (0.05 + 0.1 * np.abs(x)) * rng.normal(size=n)


rng = np.random.default_rng(0)
X, y = sample(300, rng)
X_cal, y_cal = sample(100, rng)
X_new, y_new = sample(2_000, rng)
grid = np.linspace(-3, 3, 400)[:, None]

ridge = svmkit.KernelRidge(kernel="rbf", gamma=2.0, alpha=0.1).fit_conformalize(X, y)
svr = svmkit.SVR(C=10.0, gamma=2.0, epsilon=0.05, probability=True, random_state=0).fit_conformalize(X, y, cv=5)
svr_split = svmkit.SVR(C=10.0, gamma=2.0, epsilon=0.05).fit(X, y).conformalize(X_cal, y_cal)
panels = [("KernelRidge, jackknife+", ridge, "jackknife+"), ("SVR, CV+ (5 folds)", svr, "cv+"),
          ("SVR, split (100 calibration rows)", svr_split, "split"), ("SVR, Laplace (LIBSVM)", svr, "laplace")]

fig, axes = plt.subplots(1, 4, figsize=(18, 4), sharey=True, layout="constrained")
for (title, model, method), ax in zip(panels, axes):
    band = model.predict_interval(grid, coverage=0.9, method=method)
    new = model.predict_interval(X_new, coverage=0.9, method=method)
    covered = np.mean((new[:, 0] <= y_new) & (y_new <= new[:, 1]))
    ax.scatter(X[:, 0], y, s=6, c="0.5")
    ax.fill_between(grid[:, 0], band[:, 0], band[:, 1], alpha=0.3)
    ax.plot(grid[:, 0], model.predict(grid), c="k", lw=1)
    ax.set_title(f"{title}\ncoverage {covered:.3f}, mean width {np.mean(new[:, 1] - new[:, 0]):.2f}")
    print(f"{title}: coverage of 2,000 new points {covered:.3f} (asked 0.9), "
          f"mean width {np.mean(new[:, 1] - new[:, 0]):.3f}")
plt.show()
