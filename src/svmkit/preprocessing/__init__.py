"""Layer 4: feature scaling as LIBSVM's tools do it; may import io for range files."""

from svmkit.preprocessing.scaler import LibsvmScaler

__all__ = ["LibsvmScaler"]
