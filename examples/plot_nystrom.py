"""
Nyström: accuracy against the number of centres M
=================================================

The Nyström method (Williams & Seeger 2001) replaces the N × N kernel by
:math:`K \\approx K_{NM} K_{MM}^{-1} K_{MN}` on M centres, so that kernel ridge solves the
M × M normal equations :math:`(K_{NM}^\\top K_{NM} + \\lambda K_{MM})\\beta = K_{NM}^\\top y` in
O(N M²) time and O(N M) memory; Rudi, Carratino & Rosasco (2017, Falkon) show that
:math:`M \\sim \\sqrt{N}` centres keep the statistical accuracy of the exact solution, and solve
the large-M case by preconditioned conjugate gradient. Here the test error approaches the exact
solver's as M grows, at a fraction of its time; ``centers='leverage'`` draws the centres by
approximate ridge leverage scores.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import svmkit

rng = np.random.default_rng(0)
n = 4000
X = rng.uniform(-3, 3, (n + 2000, 2))
y = np.sinc(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.normal(size=X.shape[0])
X_train, y_train, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
params = {"kernel": "rbf", "alpha": 1e-3, "gamma": 1.0}

start = time.perf_counter()
exact = svmkit.KernelRidge(**params, solver="cholesky").fit(X_train, y_train)
exact_time = time.perf_counter() - start
exact_error = np.sqrt(np.mean((exact.predict(X_test) - y_test) ** 2))
print(f"exact (Cholesky), N = {n}: test RMSE {exact_error:.4f}, {exact_time:.2f} s")

Ms = [10, 20, 40, 80, 160, 320, 640]
errors = {"uniform": [], "leverage": []}
times = []
for M in Ms:
    for centers in errors:
        start = time.perf_counter()
        model = svmkit.KernelRidge(**params, solver="nystrom", n_components=M, centers=centers,
                                   random_state=0).fit(X_train, y_train)
        if centers == "uniform":
            times.append(time.perf_counter() - start)
        errors[centers].append(np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2)))
    print(f"M = {M:4d}: test RMSE uniform {errors['uniform'][-1]:.4f}, leverage {errors['leverage'][-1]:.4f}, "
          f"{times[-1]:.3f} s")

fig, axes = plt.subplots(1, 2, figsize=(12, 4.3), layout="constrained")
for centers, values in errors.items():
    axes[0].loglog(Ms, values, "o-", label=f"Nyström, {centers} centres")
axes[0].axhline(exact_error, color="k", ls="--", label="exact")
axes[0].axvline(np.sqrt(n), color="0.5", ls=":", label="M = √N")
axes[0].set_xlabel("centres M")
axes[0].set_ylabel("test RMSE")
axes[0].legend(fontsize="small")
axes[1].loglog(Ms, times, "o-", label="Nyström fit")
axes[1].axhline(exact_time, color="k", ls="--", label="exact fit")
axes[1].set_xlabel("centres M")
axes[1].set_ylabel("seconds (this machine)")
axes[1].legend(fontsize="small")
plt.show()
