"""Layer 3, the SMO family: the models whose duals LIBSVM's SMO solves (SVC, ν-SVC, SVR, ν-SVR,
one-class SVM, kernel quantile regression), their formulations, fit, calibration and one-vs-one
prediction, and their cascade on a Dask cluster."""

from svmkit import registry

__all__, __getattr__ = registry.exports(__name__)
