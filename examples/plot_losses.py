"""
Hinge, logistic and squared losses
==================================

The soft-margin SVM is L2-regularised hinge loss: eliminating the slacks of Cortes & Vapnik's
primal gives

.. math::

   \\min_{w, b}\\ \\tfrac12 \\lVert w \\rVert^2 + C \\sum_i \\max(0, 1 - y_i f(x_i)),

(Hastie, Tibshirani & Friedman 2009, §12.3.2; Zhu & Hastie 2005). LIBLINEAR (Fan et al. 2008)
solves it and its squared-hinge twin :math:`\\max(0, 1 - y f)^2` by dual coordinate descent
(Hsieh et al. 2008); kernel logistic regression (Zhu & Hastie 2005) puts
:math:`\\ln(1 + e^{-y f})` in its place, and the least-squares SVM (Suykens & Vandewalle 1999)
the squared error :math:`(1 - y f)^2`. The left panel draws the losses against the margin
:math:`y f`; the right one the linear boundaries they give on the same data.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification

import svmkit

m = np.linspace(-2, 3, 400)
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
axes[0].plot(m, np.maximum(0, 1 - m), label="hinge (SVM)")
axes[0].plot(m, np.maximum(0, 1 - m) ** 2, label="squared hinge (L2-SVM)")
axes[0].plot(m, np.log1p(np.exp(-m)) / np.log(2), label="logistic / ln 2 (KLR)")
axes[0].plot(m, (1 - m) ** 2, label="squared (LS-SVM)")
axes[0].plot(m, (m <= 0).astype(float), "k", lw=1, label="0/1")
axes[0].set_ylim(0, 4)
axes[0].set_xlabel("margin y·f(x)")
axes[0].set_ylabel("loss")
axes[0].legend(fontsize="small")

X, y = make_classification(n_samples=200, n_features=2, n_redundant=0, n_clusters_per_class=1,
                           class_sep=0.8, random_state=4)
models = {"hinge": svmkit.LinearSVC(loss="hinge", C=1.0),
          "squared hinge": svmkit.LinearSVC(loss="squared_hinge", C=1.0),
          "logistic": svmkit.KernelLogisticRegression(kernel="linear", C=1.0),
          "squared (LS-SVC)": svmkit.LSSVC(kernel="linear", C=1.0)}
axes[1].scatter(*X.T, c=y, cmap="coolwarm", s=14, edgecolors="k", linewidths=0.3)
xs = np.linspace(X[:, 0].min(), X[:, 0].max(), 2)
for (name, model), colour in zip(models.items(), ["C0", "C1", "C2", "C3"]):
    model.fit(X, y)
    xx, yy = np.meshgrid(np.linspace(*axes[1].get_xlim(), 200), np.linspace(*axes[1].get_ylim(), 200))
    f = model.decision_function(np.column_stack([xx.ravel(), yy.ravel()])).reshape(xx.shape)
    axes[1].contour(xx, yy, f, levels=[0], colors=colour)
    axes[1].plot([], [], colour, label=f"{name}: accuracy {model.score(X, y):.3f}")
    print(f"{name:17s} training accuracy {model.score(X, y):.3f}")
axes[1].legend(fontsize="small")
axes[1].set_title("f = 0 for each loss, C = 1")
plt.show()
