"""Layer 3: the estimators and the fit session they share. Each builds its problem, calls the
solver, reads α and b back; imports the backend, solvers, kernels, the execution layer and the
shared helpers, never model_selection, io or cli. Its public names are the models of
svmkit.registry, each imported from its module on first use."""

from svmkit import registry

__all__, __getattr__ = registry.exports(__name__)
