"""Errors that say which problem has no solution."""


class NotSeparableError(ValueError):
    """The hard-margin problem (C=inf) has no solution: the classes are not separable by the kernel."""


class TubeTooNarrowError(ValueError):
    """The hard ε-tube problem (C=inf) has no solution: no function of the kernel fits within ε."""
