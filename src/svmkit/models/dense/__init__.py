"""Layer 3, the dense family: the kernel models whose coefficients are dense over the training
rows or Nyström centres (kernel ridge, LS-SVM, kernel logistic regression), and their
Nyström fits on a Dask cluster."""

from svmkit import registry

__all__, __getattr__ = registry.exports(__name__)
