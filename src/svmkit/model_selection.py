"""Model selection for svmkit's models: `SVMSearchCV`, the (C, γ) search that shares kernels
across cells and folds and warm-starts the solver along C (seed 003, §4); `KernelRidgeCV` and
`LSSVMCV`, searches by exact leave-one-out without refits (a factorisation per cell, or one
eigendecomposition per γ for many regularisation values)."""

from svmkit.selection.loo import KernelRidgeCV, LSSVMCV
from svmkit.selection.search import SVMSearchCV

__all__ = ["SVMSearchCV", "KernelRidgeCV", "LSSVMCV"]
