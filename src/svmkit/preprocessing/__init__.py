"""Layer 4: feature scaling as LIBSVM's tools do it; may import io for range files. Its public
names are the scalers of svmkit.registry, each imported on first use."""

from svmkit import registry

__all__, __getattr__ = registry.exports(__name__)
