"""Layer 3: the estimators and the fit session they share. Each builds its problem, calls the
solver, reads α and b back; imports the backend, solvers, kernels, the execution layer and the
shared helpers, never model_selection, io or cli. Its public names are the models of
svmkit.registry, each imported from its module on first use."""

from svmkit import registry

__all__ = list(registry.defined_in(__name__))


def __getattr__(name):
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = registry.load(registry.ESTIMATORS[name])
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
