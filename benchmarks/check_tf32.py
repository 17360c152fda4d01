"""Would TF32 Gram blocks keep the GPU's SVC within its exactness checks? No GPU needed.

    python benchmarks/check_tf32.py [--rows 8000]

A TF32 tensor-core GEMM (NVIDIA A100 and later) rounds both inputs to 10 mantissa bits and adds
in float32. This script emulates it exactly on the device kernel code run through NumPy: the
RBF rows as the GPU computes them (columns centred, float32 squared norms, near distances
recomputed from the differences), with the GEMM's inputs rounded to TF32. It fits LIBSVM's
C-SVC on the float32 kernel and on the TF32 kernel (as precomputed kernels: the same solver on
each) and prints the largest kernel difference, the dual objectives' relative difference and the
share of equal predictions, for heart_scale, satimage (classes 1 and 2), and the first --rows
rows of a9a and w8a. The GPU's float32 fits agree with the CPU's to 1e-6 (`check_gpu.py`).
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_svmlight_file

import svmkit
from _results import write  # beside this script, whose folder is on sys.path
from svmkit.kernels import device
from svmkit.kernels.kinds import make_kernel
from workers import data_dir

#: name: (file, features, C, γ) — the parameters of bench_proba.py and check_gpu.py.
SETS = {"heart_scale": ("heart_scale", 13, 1.0, 0.1), "satimage": ("satimage.scale", 36, 10.0, 0.5),
        "a9a": ("a9a", 123, 1.0, 0.05), "w8a": ("w8a", 300, 8.0, 0.03)}


def tf32(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to TF32's 10 mantissa bits (to nearest, ties to even)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    odd = (bits >> np.uint32(13)) & np.uint32(1)
    return ((bits + np.uint32(0x0FFF) + odd) & np.uint32(0xFFFFE000)).view(np.float32)


def rbf_rows(spec, D, sq, gemm_inputs) -> np.ndarray:
    """The device's RBF kernel of the placed rows D (`kernels.device.device_gram`'s steps), the
    GEMM's inputs passed through `gemm_inputs`; made exactly symmetric, as a precomputed kernel
    must be."""
    P = np.matmul(gemm_inputs(D), gemm_inputs(D).T)
    P *= -2.0
    P += sq[:, None]
    P += sq[None, :]
    device.exact_near_distances(np, P, D, D, sq, sq)
    K = np.exp(-spec.gamma * np.maximum(P, 0.0)).astype(np.float64)
    return (K + K.T) / 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=8000)
    args = parser.parse_args()
    rows = []
    for name, (file, features, C, gamma) in SETS.items():
        X, y = load_svmlight_file(str(data_dir() / file), n_features=features)
        X, y = X[: args.rows].toarray(), y[: args.rows]
        if name == "satimage":
            keep = np.isin(y, [1, 2])
            X, y = X[keep], y[keep]
        spec = make_kernel("rbf", X, gamma)
        D, sq = device.device_rows(np, spec, X)
        K32, K_tf32 = rbf_rows(spec, D, sq, lambda a: a), rbf_rows(spec, D, sq, tf32)
        exact = svmkit.SVC(kernel="precomputed", C=C).fit(K32, y)
        rounded = svmkit.SVC(kernel="precomputed", C=C).fit(K_tf32, y)
        objective = exact.objective_.sum()
        row = {"set": name, "rows": X.shape[0], "max |K_tf32 - K_fp32|": float(np.abs(K_tf32 - K32).max()),
               "objective rel diff": float(abs(rounded.objective_.sum() - objective) / abs(objective)),
               "equal predictions": float(np.mean(exact.predict(K32) == rounded.predict(K32)))}
        rows.append(row)
        print(" | ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()), flush=True)
    write("check_tf32", rows, notes="TF32 emulated on the CPU; the float32 GPU fits agree with the CPU's to 1e-6.",
          plots=[{"kind": "bars", "label": ["set"], "value": "objective rel diff", "reference": 1e-6}])


if __name__ == "__main__":
    main()
