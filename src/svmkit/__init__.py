"""svmkit: support vector machines and their relatives, exact against LIBSVM, fast on CPU."""

from svmkit.exceptions import NotSeparableError
from svmkit.models import SVC

__version__ = "0.1.0"

__all__ = ["SVC", "NotSeparableError", "__version__"]
