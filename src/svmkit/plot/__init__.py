"""Layer 4: pictures that explain a fit (matplotlib, the `plot` extra). Every function takes
`ax=` (a new figure when None) and returns what it drew on."""

from svmkit.plot.boundary import decision_boundary, parameter_gallery
from svmkit.plot.calibration import calibration
from svmkit.plot.regression import regression_band
from svmkit.plot.search import cv_heatmap
from svmkit.plot.shapley import shapley

__all__ = ["decision_boundary", "parameter_gallery", "regression_band", "cv_heatmap", "calibration", "shapley"]
