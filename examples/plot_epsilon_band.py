"""
The ε-band: ε_inf, the hard band and its reduction to classification
=====================================================================

Bi & Bennett (2003) read linear regression geometrically. On one line of noisy 1-D data:

1. ε_inf: the narrowest band any line can fit, the least ε̄ with
   :math:`|y_i - (w^\\top x_i + b)| \\le \\bar\\varepsilon` for every i (a linear program, the
   Chebyshev fit).
2. The hard ε̄-band: for ε̄ > ε_inf, a hard-margin SVC on D⁺ = {(x_i, y_i + ε̄)} and
   D⁻ = {(x_i, y_i − ε̄)} gives (w̄, η̄, b̄); the line (−w̄/η̄, −b̄/η̄) is the flattest one inside
   the band ε = ε̄ − 1/η̄ (Bi & Bennett 2003, the reduction of regression to classification),
   which ``SVR(kernel='linear', C=inf, epsilon=ε)`` finds directly (Vapnik 1995's hard ε-tube).
3. The soft ε-band: below ε_inf no line fits every point; ``SVR(kernel='linear', C)`` pays C per
   unit of distance outside the band (Vapnik 1995; Smola & Schölkopf 2004), and its primal and
   dual objectives meet.

The figure shows the Chebyshev line with its band ε_inf, a hard band above it, and the soft
band at ε = 0.1 < ε_inf with the points it leaves outside.

Run from the repository root: ``python examples/plot_epsilon_band.py``
"""

import matplotlib.pyplot as plt
import numpy as np

import svmkit
from svmkit import plot
from svmkit.models.band import HardBandSVR, epsilon_inf, hard_band_reduction, soft_band_dual, soft_band_primal

rng = np.random.default_rng(0)
x = np.linspace(-3, 3, 40)[:, None]
y = 0.5 * x.ravel() + 0.3 * np.sinc(x).ravel() + 0.05 * rng.normal(size=40)
print(f"data: {y.size} points, y = 0.5 x + 0.3 sinc(x) + noise; (max y - min y)/2 = {np.ptp(y) / 2:.4f}")

eps_inf, w_inf, b_inf = epsilon_inf(x, y)
print(f"\n1. epsilon_inf = {eps_inf:.6f}, reached by the Chebyshev line w = {w_inf[0]:.6f}, b = {b_inf:.6f}")

print("\n2. hard bands: epsilon_bar -> epsilon = epsilon_bar - 1/eta_bar, the line by reduction and by SMO")
for epsilon_bar in (1.0, 3.0, 10.0):
    r = hard_band_reduction(x, y, epsilon_bar)
    print(f"   epsilon_bar = {epsilon_bar:5.1f}: eta_bar = {r.eta_bar:.6f}, epsilon = {r.epsilon:.6f}")
    print(f"      reduction: w = {r.coef[0]:.6f}, b = {r.intercept:.6f}")
    if r.epsilon > eps_inf + 1e-6:
        smo = HardBandSVR(epsilon=r.epsilon).fit(x, y)
        print(f"      SMO      : w = {smo.coef_[0]:.6f}, b = {smo.intercept_:.6f}")
    else:
        print("      epsilon = epsilon_inf: this epsilon_bar is close enough that the band is the Chebyshev line")
for eps in (0.3, 0.6):
    red = HardBandSVR(epsilon=eps, method="reduction").fit(x, y)
    print(f"   epsilon = {eps}: the reduction needs epsilon_bar = {red.epsilon_bar_:.6f}; "
          f"w = {red.coef_[0]:.6f}, b = {red.intercept_:.6f}, largest |residual| = "
          f"{np.abs(y - red.predict(x)).max():.6f}")
try:
    HardBandSVR(epsilon=0.1).fit(x, y)
except ValueError as error:
    print(f"   epsilon = 0.1: {error}")

print("\n3. soft bands at epsilon = 0.1 < epsilon_inf: SVR(kernel='linear', C, epsilon)")
for C in (0.1, 1.0, 10.0):
    svr = svmkit.SVR(kernel="linear", C=C, epsilon=0.1, tol=1e-8).fit(x, y)
    w, b = svr.coef_.ravel(), float(svr.intercept_[0])
    beta = np.zeros(y.size)
    beta[svr.support_] = svr.dual_coef_.ravel()
    primal = soft_band_primal(x, y, w, b, C, 0.1)
    dual = soft_band_dual(x, y, np.maximum(beta, 0), np.maximum(-beta, 0), 0.1)
    outside = int((np.abs(y - x @ w - b) > 0.1 + 1e-9).sum())
    print(f"   C = {C:5.1f}: w = {w[0]:.6f}, b = {b:.6f}, {outside:2d} points outside the band, "
          f"primal = {primal:.8f}, dual = {dual:.8f}")

fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
plot.regression_band(HardBandSVR(epsilon=0.6).fit(x, y), x, y, ax=axes[0])
axes[0].set_title(f"hard band ε = 0.6 and the narrowest band ε_inf = {eps_inf:.3f}")
plot.regression_band(svmkit.SVR(kernel="linear", C=1.0, epsilon=0.1, tol=1e-8).fit(x, y), x, y, ax=axes[1])
axes[1].set_title("soft band ε = 0.1 < ε_inf, C = 1")
plt.show()
