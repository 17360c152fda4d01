"""
Soft margin at several C, with the support-vector categories
=============================================================

The soft-margin SVM (Cortes & Vapnik 1995) solves

.. math::

   \\min_{w, b, \\xi}\\ \\tfrac12 w^\\top w + C \\sum_i \\xi_i
   \\quad\\text{s.t.}\\quad y_i (w^\\top \\phi(x_i) + b) \\ge 1 - \\xi_i,\\ \\xi_i \\ge 0,

whose dual bounds every multiplier by :math:`0 \\le \\alpha_i \\le C`. The KKT conditions sort
the training points into three categories (Cortes & Vapnik 1995; Schölkopf & Smola 2002, §7.5):
:math:`\\alpha_i = 0` (outside the margin, dots), :math:`0 < \\alpha_i < C` (free support
vectors, exactly on :math:`f = \\pm 1`, squares) and :math:`\\alpha_i = C` (bounded support
vectors, inside the margin or misclassified, triangles). A small C tolerates many margin
violations and gives a wide margin with many bounded SVs; a large C narrows the margin and
approaches the hard margin (``C=np.inf``, Boser, Guyon & Vapnik 1992).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

import svmkit
from svmkit import plot

X, y = make_blobs(n_samples=120, centers=2, cluster_std=1.6, random_state=3)

Cs = [0.01, 0.1, 1.0, 100.0]
fig, axes = plt.subplots(1, len(Cs), figsize=(16, 4), layout="constrained")
for C, ax in zip(Cs, axes):
    model = svmkit.SVC(kernel="linear", C=C).fit(X, y)
    plot.decision_boundary(model, X, y, ax=ax, legend=C == Cs[0])
    margin = 2 / np.linalg.norm(model.coef_)
    ax.set_title(f"C = {C:g}: margin width {margin:.2f}")
    print(f"C = {C:7g}: {model.free_support_.size:3d} free SVs, {model.bounded_support_.size:3d} bounded SVs, "
          f"margin 2/|w| = {margin:.3f}, training accuracy {model.score(X, y):.3f}")
plt.show()
