"""Layer 3, the linear family: LIBLINEAR's linear SVMs (LinearSVC, LinearSVR), and their fits
on a Dask cluster."""

from svmkit import registry

__all__, __getattr__ = registry.exports(__name__)
