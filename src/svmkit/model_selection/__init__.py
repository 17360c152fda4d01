"""Layer 4: model selection — `SVMSearchCV`, the (C, γ) search that shares kernels across cells
and folds and warm-starts the solver along C (Hsu, Chang & Lin, A Practical Guide to Support Vector
Classification, §3.2); `KernelRidgeCV`
and `LSSVMCV`, searches by exact leave-one-out without refits (Cawley & Talbot 2004). Its
modules: parameter grids, cross-validation folds, the warm-started paths that fit every cell of
one kernel, a Pipeline's transformed folds, the searches. Imports models and the layers below.
Its public names are the searches of svmkit.registry, each imported on first use."""

from svmkit import registry

__all__, __getattr__ = registry.exports(__name__)
