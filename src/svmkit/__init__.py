"""svmkit: support vector machines and their relatives, exact against LIBSVM, fast on CPU."""

import importlib
import os

# The compiled loops (OpenMP) alternate with BLAS calls that have their own threads; spinning
# OpenMP workers starve BLAS on small machines. Must be set
# before the OpenMP runtime loads; an explicit user setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from svmkit._version import __version__

from svmkit import registry

#: The public names besides the estimators (svmkit.registry), each with its module.
_OTHERS = {"NotSeparableError": "svmkit.exceptions", "TubeTooNarrowError": "svmkit.exceptions",
           "ModelFileError": "svmkit.exceptions", "DataFormatError": "svmkit.exceptions",
           "Options": "svmkit.options", "OnDevice": "svmkit.kernels.kinds", "load_svmlight": "svmkit.io.data", "save": "svmkit.io.native",
           "load": "svmkit.io.native"}

# The module each public name comes from. They are imported on first use (PEP 562): the
# estimators pull in scikit-learn and the compiled core, which `import svmkit` need not load.
_HOMES = {**{name: registry.module_of(name) for name in registry.ESTIMATORS}, **_OTHERS}

__all__ = [*_HOMES, "model_selection", "band", "__version__"]


def __getattr__(name):
    if name in ("model_selection", "band"):  # importing a submodule makes it an attribute of the package
        return importlib.import_module(f"svmkit.{name}")
    if name not in _HOMES:
        raise AttributeError(f"module 'svmkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # later look-ups find it without coming here
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
