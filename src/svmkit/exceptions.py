"""Every public error: the problems that have no solution, and files that cannot be read."""


class NotSeparableError(ValueError):
    """The hard-margin problem (C=inf) has no solution: the classes are not separable by the kernel."""


class TubeTooNarrowError(ValueError):
    """The hard ε-tube problem (C=inf) has no solution: no function of the kernel fits within ε."""


class ModelFileError(ValueError):
    """A model file that cannot be read: not a model file, corrupt, truncated or too new."""


class DataFormatError(ValueError):
    """A data or scaling-range file that breaks its format; the message says where and what."""
