"""
The ε-SVR tube
==============

ε-support vector regression (Vapnik 1995; Smola & Schölkopf 2004) pays nothing for residuals
inside a tube of half-width ε and C per unit outside it:

.. math::

   \\min_{w, b}\\ \\tfrac12 w^\\top w + C \\sum_i \\max(0, |y_i - f(x_i)| - \\varepsilon).

Points strictly inside the tube have :math:`\\alpha_i = \\alpha_i^* = 0` and do not enter f
(dots); points on the tube's edge are free support vectors (squares); points outside are bounded
(:math:`\\alpha_i` or :math:`\\alpha_i^* = C`, triangles). A wider tube leaves fewer support
vectors and a flatter function.
"""

import matplotlib.pyplot as plt
import numpy as np

import svmkit
from svmkit import plot

rng = np.random.default_rng(0)
x = np.sort(rng.uniform(-3, 3, 80))[:, None]
t = np.sinc(x[:, 0]) + 0.1 * rng.normal(size=80)

epsilons = [0.05, 0.15, 0.4]
fig, axes = plt.subplots(1, len(epsilons), figsize=(15, 4), layout="constrained")
for eps, ax in zip(epsilons, axes):
    svr = svmkit.SVR(C=10.0, gamma=1.0, epsilon=eps).fit(x, t)
    plot.regression_band(svr, x, t, ax=ax)
    ax.set_title(f"ε = {eps}: {svr.support_.size} SVs of {t.size}")
    print(f"epsilon = {eps}: inside {svr.inside_tube_.size}, on the tube {svr.on_tube_.size}, "
          f"outside {svr.outside_tube_.size}")
plt.show()
