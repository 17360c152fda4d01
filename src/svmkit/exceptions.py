"""Every public error: the problems that have no solution, and files that cannot be read; and
`warn`, which attributes svmkit's warnings to the user's line."""

import os
import sys
import warnings

#: svmkit's folder: frames of files under it are svmkit's own.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message, category=UserWarning):
    """`warnings.warn` attributed to the innermost caller outside svmkit (the user's line,
    however deep in the package it is raised), as Python 3.12's `skip_file_prefixes` does."""
    frame, level = sys._getframe(1), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class NotSeparableError(ValueError):
    """The hard-margin problem (C=inf) has no solution: the classes are not separable by the kernel."""


class TubeTooNarrowError(ValueError):
    """The hard ε-tube problem (C=inf) has no solution: no function of the kernel fits within ε."""


class ModelFileError(ValueError):
    """A model file that cannot be read: not a model file, corrupt, truncated or too new."""


class DataFormatError(ValueError):
    """A data or scaling-range file that breaks its format; the message says where and what."""
