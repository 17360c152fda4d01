"""`svmkit plot [-o out.png] model_file data_file`: the picture that fits the model and data —
the decision boundary of 2-D classification data, the tube of 1-D regression data."""

from __future__ import annotations

import argparse
import os

from svmkit.cli.common import check_outputs, fit_width, read_data, read_model


#: The finest resolution `plot --dpi` takes: the 5 × 4.5 inch figure is then 6000 × 5400 pixels
#: (130 MB of RGBA), where 100000 dots per inch would need hundreds of GB.
MAX_DPI = 1200


def dpi(text) -> int:
    """--dpi's value: an integer from 1 to MAX_DPI."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"dots per inch must be an integer, got {text!r}") from None
    if not 1 <= value <= MAX_DPI:
        raise argparse.ArgumentTypeError(f"dots per inch must be 1 to {MAX_DPI}, got {value}")
    return value


def add_parser(sub):
    p = sub.add_parser("plot", help="draw a model over a data file: 2-D classification or 1-D regression",
                       usage="svmkit plot [-o out.png] model_file data_file")
    p.add_argument("-o", "--output", help="PNG file to write (default: <model_file name>.png)")
    p.add_argument("--dpi", type=dpi, default=100, help=f"dots per inch, 1 to {MAX_DPI} (default 100)")
    p.add_argument("model_file")
    p.add_argument("data_file")
    p.set_defaults(run=run)


def save_png(ax, path, dpi=100) -> str:
    """Write the figure of `ax` as a PNG at `path` (an existing file is replaced only once the
    new one is complete); returns the path."""
    from svmkit.io.atomic import atomic_write

    with atomic_write(path, "wb") as fh:
        ax.figure.savefig(fh, format="png", dpi=dpi)
    return str(path)


def agg():
    """Draw without a display (a file is the only output)."""
    from svmkit.plot._mpl import pyplot

    pyplot().switch_backend("Agg")


def run(args) -> int:
    from svmkit import plot
    from svmkit.models import SVR, LinearSVR, NuSVR

    out = args.output or os.path.basename(args.model_file) + ".png"
    check_outputs(out)
    agg()
    est = read_model(args.model_file)
    X, y, _ = read_data(args.data_file, precomputed=getattr(est, "kernel", None) == "precomputed")
    est, X = fit_width(est, X)
    regression = isinstance(est, (SVR, NuSVR, LinearSVR))
    if regression and X.shape[1] == 1:
        ax = plot.regression_band(est, X, y)
    elif not regression and hasattr(est, "classes_") and X.shape[1] == 2:
        ax = plot.decision_boundary(est, X, y)
    else:
        kind = "regression" if regression else "classification"
        raise ValueError(f"svmkit plot draws 2-D classification or 1-D regression data; this is {kind} with "
                         f"{X.shape[1]} features: in Python, svmkit.plot.decision_boundary(..., project=PCA(2)) "
                         "draws a 2-D slice")
    print(f"Output picture: {save_png(ax, out, args.dpi)}")
    return 0
