"""
ν-SVC and the one-class SVM
===========================

ν-SVC (Schölkopf et al. 2000) replaces C by ν ∈ (0, 1]: ν is an upper bound on the fraction of
margin errors and a lower bound on the fraction of support vectors. The one-class SVM
(Schölkopf et al. 2001) separates the data from the origin in feature space; with the RBF
kernel it estimates the support of the distribution, and ν bounds the fraction of training
points left outside from above and the fraction of support vectors from below.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

import svmkit
from svmkit import plot

X, y = make_moons(n_samples=200, noise=0.3, random_state=1)
fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), layout="constrained")

nus = np.linspace(0.05, 0.9, 12)
fractions = []
for nu in nus:
    model = svmkit.NuSVC(nu=nu, gamma=1.0).fit(X, y)
    fractions.append((model.support_.size / y.size, np.mean(model.predict(X) != y)))
fractions = np.array(fractions)
axes[0].plot(nus, fractions[:, 0], "o-", label="fraction of SVs (≥ ν)")
axes[0].plot(nus, fractions[:, 1], "s-", label="training error (≤ ν)")
axes[0].plot(nus, nus, "k--", lw=0.8, label="ν")
axes[0].set_xlabel("ν")
axes[0].legend(fontsize="small")
axes[0].set_title("ν-SVC: ν bounds both fractions")

plot.decision_boundary(svmkit.NuSVC(nu=0.3, gamma=1.0).fit(X, y), X, y, ax=axes[1])
axes[1].set_title("ν-SVC, ν = 0.3")

inliers = X[y == 0]
one = svmkit.OneClassSVM(nu=0.1, gamma=2.0).fit(inliers)
xx, yy = np.meshgrid(np.linspace(-2, 3, 200), np.linspace(-1.5, 2, 200))
zz = one.decision_function(np.column_stack([xx.ravel(), yy.ravel()])).reshape(xx.shape)
axes[2].contourf(xx, yy, zz, levels=20, cmap="Blues_r")
axes[2].contour(xx, yy, zz, levels=[0], colors="k")
outside = one.predict(inliers) == -1
axes[2].scatter(*inliers[~outside].T, s=12, c="w", edgecolors="k", label="inside")
axes[2].scatter(*inliers[outside].T, s=20, c="r", label=f"outside ({outside.mean():.0%})")
axes[2].legend(fontsize="small")
axes[2].set_title("one-class SVM, ν = 0.1")
for nu, (sv, err) in zip(nus, fractions):
    print(f"nu = {nu:.3f}: SV fraction {sv:.3f}, training error {err:.3f}")
print(f"one-class: {outside.mean():.3f} of the points outside, {one.support_.size / inliers.shape[0]:.3f} SVs (nu = 0.1)")
plt.show()
