"""
Fitting on a GPU
================

With ``options=svmkit.Options(device='cuda')`` (CuPy, the ``gpu`` extra), SVC, NuSVC, SVR, NuSVR
and OneClassSVM keep the training data on an NVIDIA GPU in float32, compute kernel rows there by
GEMM into a row cache on the device and run the solver's loops there: the batched working-set
SMO of ThunderSVM (Wen et al. 2018) around LIBSVM's second-order pair selection (Fan, Chen & Lin
2005). The fitted attributes are NumPy arrays, so a model fitted on the GPU predicts and saves
as one fitted on the CPU.

This script times SVC fits on the CPU and, when CuPy finds a CUDA device, on the GPU, over
growing N, and checks that both find the same dual objective. The documentation shows it
without running it; on a machine without a GPU it draws the CPU's curve only.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification

import svmkit


def has_gpu():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver or no device: the CPU only
        return False


devices = ["cpu"] + (["cuda"] if has_gpu() else [])
sizes = [1000, 2000, 4000] + ([16000, 64000] if "cuda" in devices else [])
X_all, y_all = make_classification(max(sizes), 20, n_informative=10, random_state=0)
times = {d: [] for d in devices}
for n in sizes:
    X, y = X_all[:n], y_all[:n]
    objectives = {}
    for device in devices:
        if device == "cpu" and n > 4000:
            times[device].append(np.nan)
            continue
        start = time.perf_counter()
        model = svmkit.SVC(C=1.0, gamma="scale", options=svmkit.Options(device=device)).fit(X, y)
        times[device].append(time.perf_counter() - start)
        objectives[device] = float(model.objective_[0])
    print(f"N = {n:6d}: " + ", ".join(f"{d} {t[-1]:.2f} s" for d, t in times.items())
          + f"; dual objectives {objectives}")

fig, ax = plt.subplots(figsize=(6, 4.3), layout="constrained")
for device, values in times.items():
    ax.loglog(sizes, values, "o-", label=device)
ax.set_xlabel("training rows N")
ax.set_ylabel("fit seconds")
ax.legend()
plt.show()
