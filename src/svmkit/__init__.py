"""svmkit: support vector machines and their relatives, exact against LIBSVM, fast on CPU."""

import importlib
import os

# The compiled loops (OpenMP) alternate with BLAS calls that have their own threads; spinning
# OpenMP workers starve BLAS on small machines. Must be set
# before the OpenMP runtime loads; an explicit user setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from svmkit._version import __version__

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "KernelRidge", "LSSVR", "LSSVC", "KernelLogisticRegression",
           "LinearSVC", "LinearSVR", "HardBandSVR", "SVMSearchCV", "KernelRidgeCV", "LSSVMCV", "NotSeparableError",
           "TubeTooNarrowError",
           "ModelFileError", "DataFormatError", "LibsvmScaler", "load_svmlight", "save", "load",
           "model_selection", "band", "__version__"]

# The module each public name comes from. They are imported on first use (PEP 562): the
# estimators pull in scikit-learn and the compiled core, which `import svmkit` need not load.
_HOMES = {"SVC": "svmkit.models", "NuSVC": "svmkit.models", "SVR": "svmkit.models", "NuSVR": "svmkit.models",
          "OneClassSVM": "svmkit.models", "KernelRidge": "svmkit.models", "LSSVR": "svmkit.models",
          "LSSVC": "svmkit.models", "KernelLogisticRegression": "svmkit.models",
          "LinearSVC": "svmkit.models", "LinearSVR": "svmkit.models", "HardBandSVR": "svmkit.models.band",
          "SVMSearchCV": "svmkit.model_selection", "KernelRidgeCV": "svmkit.model_selection",
          "LSSVMCV": "svmkit.model_selection", "NotSeparableError": "svmkit.exceptions",
          "TubeTooNarrowError": "svmkit.exceptions", "ModelFileError": "svmkit.exceptions", "DataFormatError": "svmkit.exceptions",
          "LibsvmScaler": "svmkit.preprocessing", "load_svmlight": "svmkit.io.data",
          "save": "svmkit.io.native", "load": "svmkit.io.native"}


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
