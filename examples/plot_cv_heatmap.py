"""
The cross-validation heatmap and the chosen cell
================================================

The practical guide of Hsu, Chang & Lin (2003, §3.2) chooses (C, γ) of an RBF SVM by V-fold
cross-validation over exponentially spaced values, :math:`C = 2^{-5}, 2^{-3}, \\dots, 2^{15}`
and :math:`\\gamma = 2^{3}, 2^{1}, \\dots, 2^{-15}`, as LIBSVM's grid.py does.
:class:`~svmkit.model_selection.SVMSearchCV` fits every cell of one γ on kernel rows computed
once and warm-starts the solver along C. The left panel is the mean CV accuracy with the chosen
cell ★; the right one #SV/N, Vapnik's bound on the leave-one-out error (Vapnik 1995). With
``prefer_fewer_sv=True`` the search takes, among the cells within one standard error of the
best, the one with the fewest support vectors (✕ marks the best score when it differs).
"""

from pathlib import Path

import matplotlib.pyplot as plt

import svmkit
from svmkit import load_svmlight, plot
from svmkit.model_selection import SVMSearchCV

# LIBSVM's heart_scale (270 × 13), from the repository root or from examples/, where the
# documentation runs the script.
HEART = (Path("data") if Path("data").is_dir() else Path("../data")).resolve() / "heart_scale"

X, y = load_svmlight(HEART)
grid = {"C": [2.0 ** k for k in range(-5, 16, 2)], "gamma": [2.0 ** k for k in range(3, -16, -2)]}
search = SVMSearchCV(svmkit.SVC(), param_grid=grid, cv=5, prefer_fewer_sv=True).fit(X, y)
plot.cv_heatmap(search)
print(f"{len(search.cv_results_['params'])} cells, 5 folds")
print(f"chosen: C = {search.best_params_['C']:g}, gamma = {search.best_params_['gamma']:g}, "
      f"CV accuracy {search.best_score_:.4f}, mean #SV {search.cv_results_['mean_n_support'][search.best_index_]:.1f}")
top = search.best_by_score_
print(f"best score: C = {search.cv_results_['params'][top]['C']:g}, gamma = {search.cv_results_['params'][top]['gamma']:g}, "
      f"CV accuracy {search.cv_results_['mean_test_score'][top]:.4f}")
plt.show()
