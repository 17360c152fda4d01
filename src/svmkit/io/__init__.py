"""Layer 4: files in and out — LIBSVM / svmlight data files, LIBSVM and svmkit model files,
svm-scale range files; imports models and the layers below, never the reverse."""

import importlib

__all__ = ["DataFormatError", "load_svmlight", "load_svmlight_files", "dump_svmlight"]


def __getattr__(name):
    # The data-file names load on first use (PEP 562): io.data needs scikit-learn, which the
    # other modules of this package (atomic writes, model files) may do without.
    if name not in __all__:
        raise AttributeError(f"module 'svmkit.io' has no attribute {name!r}")
    value = getattr(importlib.import_module("svmkit.io.data"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
