"""
The C × γ gallery of an RBF SVM
===============================

The RBF kernel :math:`K(x, x') = \\exp(-\\gamma \\lVert x - x' \\rVert^2)` has a width γ, and the
soft margin a penalty C (Cortes & Vapnik 1995). Small γ gives nearly linear boundaries; large γ
makes each support vector a narrow bump that can fit every point. Small C smooths, large C
fits the training data. The panels are titled with the number of support vectors and the
training accuracy: neither says how well a cell generalises, which is what the
cross-validated grid of Hsu, Chang & Lin (2003) measures (see the CV heatmap example).

:func:`svmkit.plot.parameter_gallery` fits each row (one γ) along growing C on one shared
kernel, each fit warm-started from the previous solution.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_moons

import svmkit
from svmkit import plot

X, y = make_moons(n_samples=150, noise=0.25, random_state=0)
axes = plot.parameter_gallery(svmkit.SVC(), X, y, C=[0.1, 1, 10, 1000], gamma=[0.1, 1, 10])
for ax in axes.ravel():
    print(ax.get_title().replace("\n", " "))
plt.show()
