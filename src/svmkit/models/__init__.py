"""Layer 3: the estimators. Each builds its dual problem, calls the solver, reads α and b back."""

from svmkit.models.svc import SVC

__all__ = ["SVC"]
