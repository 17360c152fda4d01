"""
Exact leave-one-out against K-fold cross-validation
===================================================

For kernel ridge, the leave-one-out residuals need no refits: with the hat matrix
:math:`H = K (K + \\lambda I)^{-1}`, the residual of point i left out is

.. math::

   y_i - \\hat y_{(-i)}(x_i) = \\frac{y_i - \\hat y_i}{1 - H_{ii}}

(Allen 1974's PRESS; Cawley & Talbot 2004 for kernel ridge and LS-SVMs), one factorisation of
:math:`K + \\lambda I` for every point. The left panel checks the formula against N refits at one
λ; the right one draws the LOO error over λ beside 5- and 10-fold cross-validation, which needs
5 or 10 fits per λ and depends on how the folds fall.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import KFold, cross_val_score
from sklearn.preprocessing import StandardScaler

import svmkit

X, y = load_diabetes(return_X_y=True)
X = StandardScaler().fit_transform(X)
y = (y - y.mean()) / y.std()
gamma = 0.02

model = svmkit.KernelRidge(kernel="rbf", alpha=1.0, gamma=gamma, loo=True).fit(X, y)
start = time.perf_counter()
refits = np.array([y[i] - svmkit.KernelRidge(kernel="rbf", alpha=1.0, gamma=gamma)
                   .fit(np.delete(X, i, 0), np.delete(y, i)).predict(X[i:i + 1])[0] for i in range(y.size)])
refit_time = time.perf_counter() - start
print(f"largest |closed form - refit| over {y.size} points: {np.abs(model.loo_residuals_ - refits).max():.2e} "
      f"({y.size} refits took {refit_time:.1f} s)")

alphas = np.logspace(-3, 2, 16)
loo, folds = [], {5: [], 10: []}
for alpha in alphas:
    r = svmkit.KernelRidge(kernel="rbf", alpha=alpha, gamma=gamma, loo=True).fit(X, y).loo_residuals_
    loo.append(np.mean(r ** 2))
    for k in folds:
        cv = KFold(k, shuffle=True, random_state=0)
        folds[k].append(-cross_val_score(svmkit.KernelRidge(kernel="rbf", alpha=alpha, gamma=gamma), X, y,
                                         cv=cv, scoring="neg_mean_squared_error").mean())

fig, axes = plt.subplots(1, 2, figsize=(12, 4.3), layout="constrained")
axes[0].scatter(refits, model.loo_residuals_, s=8)
axes[0].plot(*(2 * [[refits.min(), refits.max()]]), "k", lw=0.8)
axes[0].set_xlabel("residual of a refit without the point")
axes[0].set_ylabel("closed-form LOO residual")
axes[0].set_title(f"λ = 1: {y.size} refits against one factorisation")
axes[1].semilogx(alphas, loo, "o-", label="exact leave-one-out")
for k, values in folds.items():
    axes[1].semilogx(alphas, values, "s--", ms=4, label=f"{k}-fold CV")
axes[1].set_xlabel("λ")
axes[1].set_ylabel("mean squared error (standardised y)")
axes[1].legend()
best = alphas[int(np.argmin(loo))]
print(f"lambda chosen by LOO: {best:.4g}; by 5-fold: {alphas[int(np.argmin(folds[5]))]:.4g}; "
      f"by 10-fold: {alphas[int(np.argmin(folds[10]))]:.4g}")
plt.show()
