"""Errors raised by svmkit."""


class NotSeparableError(ValueError):
    """A hard-margin model (C = inf) was asked to separate data that the kernel cannot separate."""
