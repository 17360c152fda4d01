"""
Kernel ridge, SVR and LS-SVR on one data set
============================================

Three kernel regressions of the same form :math:`f(x) = \\sum_i \\beta_i K(x_i, x) (+ b)`:

* kernel ridge, :math:`\\beta = (K + \\lambda I)^{-1} y` (Saunders, Gammerman & Vovk 1998;
  Bishop 2006, §6.1), no intercept, every point in the expansion;
* the LS-SVM (Suykens & Vandewalle 1999), the bordered system
  :math:`\\begin{bmatrix} 0 & 1^\\top \\\\ 1 & K + I/C \\end{bmatrix}
  \\begin{bmatrix} b \\\\ \\alpha \\end{bmatrix} = \\begin{bmatrix} 0 \\\\ y \\end{bmatrix}`:
  kernel ridge with an unpenalised intercept;
* ε-SVR (Vapnik 1995; Smola & Schölkopf 2004): the ε-insensitive loss makes the expansion
  sparse, only the points on or outside the tube are support vectors.

With λ = 1/C the first two nearly coincide; SVR's fit is as good with a fraction of the terms.
"""

import matplotlib.pyplot as plt
import numpy as np

import svmkit

rng = np.random.default_rng(1)
x = np.sort(rng.uniform(-4, 4, 120))[:, None]
t = np.sinc(x[:, 0]) + 0.5 + 0.1 * rng.normal(size=120)
grid = np.linspace(-4, 4, 400)[:, None]
truth = np.sinc(grid[:, 0]) + 0.5

C, gamma = 10.0, 0.5
models = {"kernel ridge (λ = 1/C)": svmkit.KernelRidge(kernel="rbf", alpha=1 / C, gamma=gamma),
          "LS-SVR": svmkit.LSSVR(C=C, gamma=gamma),
          "ε-SVR (ε = 0.1)": svmkit.SVR(C=C, gamma=gamma, epsilon=0.1)}
fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
ax.scatter(x[:, 0], t, s=10, c="0.6", label="data")
ax.plot(grid[:, 0], truth, "k:", label="sinc(x) + 0.5")
for name, model in models.items():
    model.fit(x, t)
    n_terms = model.support_.size if hasattr(model, "support_") else t.size
    error = np.sqrt(np.mean((model.predict(grid) - truth) ** 2))
    ax.plot(grid[:, 0], model.predict(grid), label=f"{name}: {n_terms} terms, RMSE {error:.3f}")
    print(f"{name:24s} {n_terms:4d} expansion terms, RMSE against the truth {error:.4f}")
svr = models["ε-SVR (ε = 0.1)"]
ax.scatter(x[svr.support_, 0], t[svr.support_], s=30, facecolors="none", edgecolors="C2", label="SVR's SVs")
ax.legend(fontsize="small")
plt.show()
