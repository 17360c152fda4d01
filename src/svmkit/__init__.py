"""svmkit: support vector machines and their relatives, exact against LIBSVM, fast on CPU."""

import os

# The compiled loops (OpenMP) alternate with BLAS calls that have their own threads; spinning
# OpenMP workers starve BLAS on small machines (a 10x slower predict on 2 cores). Must be set
# before the OpenMP runtime loads; an explicit user setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from svmkit.exceptions import NotSeparableError, TubeTooNarrowError  # noqa: E402
from svmkit.io.native import load  # noqa: E402
from svmkit.models import SVC, SVR, NuSVC, NuSVR, OneClassSVM  # noqa: E402

__version__ = "0.1.0"

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "NotSeparableError", "TubeTooNarrowError",
           "load", "__version__"]
