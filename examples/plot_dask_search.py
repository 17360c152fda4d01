"""
A model search on a Dask cluster
================================

:class:`~svmkit.model_selection.SVMSearchCV` runs its tasks (one kernel's cells on some folds)
on joblib threads by default, or on a Dask cluster with ``backend='dask'``: a local cluster
started for the search, or an existing one given by ``scheduler_address``. The result is the
same cell by cell. This example starts a small local cluster of threads, runs a grid on it,
and compares the scores with the threaded search.
"""

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster

import svmkit
from svmkit import load_svmlight, plot
from svmkit.model_selection import SVMSearchCV

# LIBSVM's heart_scale (270 × 13), from the repository root or from examples/, where the
# documentation runs the script.
HEART = (Path("data") if Path("data").is_dir() else Path("../data")).resolve() / "heart_scale"

X, y = load_svmlight(HEART)
grid = {"C": [2.0 ** k for k in range(-3, 12, 2)], "gamma": [2.0 ** k for k in range(1, -12, -2)]}

if __name__ == "__main__":
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        on_dask = SVMSearchCV(svmkit.SVC(), param_grid=grid, backend="dask",
                              scheduler_address=cluster.scheduler_address).fit(X, y)
    on_threads = SVMSearchCV(svmkit.SVC(), param_grid=grid).fit(X, y)

    dask_scores = on_dask.cv_results_["mean_test_score"]
    thread_scores = on_threads.cv_results_["mean_test_score"]
    print(f"{dask_scores.size} cells; largest score difference Dask - threads: "
          f"{np.abs(dask_scores - thread_scores).max():.2e}")
    print(f"chosen on Dask: {on_dask.best_params_}, CV accuracy {on_dask.best_score_:.4f}")
    plot.cv_heatmap(on_dask)
    plt.show()
