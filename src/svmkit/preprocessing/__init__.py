"""Feature scaling as LIBSVM's tools do it."""

from svmkit.preprocessing.scaler import LibsvmScaler

__all__ = ["LibsvmScaler"]
