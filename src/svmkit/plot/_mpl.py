"""matplotlib, imported on first use with an error that names the extra when it is missing."""

from __future__ import annotations


def pyplot():
    """matplotlib.pyplot, or an ImportError saying how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("svmkit.plot needs matplotlib: pip install 'svmkit[plot]'") from None
    return plt


def axes(ax, figsize=(5.0, 4.5)):
    """`ax`, or the Axes of a new figure of `figsize` inches."""
    if ax is not None:
        return ax
    _, ax = pyplot().subplots(figsize=figsize, layout="constrained")
    return ax
