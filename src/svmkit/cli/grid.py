"""`svmkit grid [options] data_file`: LIBSVM grid.py — cross-validation accuracy (or MSE for
-s 3/4) over a log2 grid of C and γ (and ε with -log2p), a line per cell, then the best."""

from __future__ import annotations

import csv
import sys

import numpy as np

from svmkit.cli.common import check_outputs, read_data, release_workers
from svmkit.cli.progress import progress_callback
from svmkit.cli.train import add_svm_options, build_estimator, libsvm_class_order


def _powers_of_two(flag, text):
    """The values 2**e of grid.py's "begin,end,step" log2 range, or None for "null" (no search
    of that parameter); a bad range is a ValueError naming the flag."""
    if text == "null":
        return None
    from svmkit.model_selection.grid import powers_of_two

    try:
        begin, end, step = (float(v) for v in text.split(","))
        return powers_of_two(begin, end, step)
    except ValueError as exc:
        raise ValueError(f"{flag} {text!r}: a log2 range is begin,end,step or null ({exc})") from None


def join_range_flags(argv):
    """grid.py's `-log2c -1,3,2` as `-log2c=-1,3,2`, so that a range starting with a minus sign
    is not read as an option."""
    out = []
    tokens = iter(argv)
    for tok in tokens:
        if tok in ("-log2c", "-log2g", "-log2p"):
            out.append(f"{tok}={next(tokens, '')}")
        else:
            out.append(tok)
    return out


def add_parser(sub):
    p = sub.add_parser(
        "grid", add_help=False, help="choose C and gamma by cross validation over a log2 grid (grid.py)",
        usage="svmkit grid [-log2c begin,end,step|null] [-log2g begin,end,step|null] "
              "[-log2p begin,end,step|null] [-v fold] [svm-train options] data_file")
    p.add_argument("--help", action="help", help="show this help and exit")
    p.add_argument("-log2c", default="-5,15,2", help="log2 C range (default -5,15,2)")
    p.add_argument("-log2g", default="3,-15,-2", help="log2 gamma range (default 3,-15,-2)")
    p.add_argument("-log2p", default="null", help="log2 epsilon range of -s 3 (default null: not searched)")
    p.add_argument("-v", "--folds", type=int, default=5, help="cross-validation folds (default 5)")
    p.add_argument("--fewer-sv", action="store_true",
                   help="among cells within one standard error of the best, take the fewest support vectors")
    p.add_argument("-j", "--jobs", type=int, default=-1, help="parallel tasks (default: every core)")
    p.add_argument("--out", help="write the whole table to this CSV file")
    p.add_argument("--plot", metavar="PNG", help="draw the CV scores and #SV/N over log2 C × log2 gamma into this file")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    add_svm_options(p)
    p.add_argument("data_file")
    p.set_defaults(run=run, svm_type=0)


def search_grid(args, X, y):
    """The fitted SVMSearchCV of the grid the options describe, on (X, y)."""
    from svmkit.model_selection import SVMSearchCV

    est = build_estimator(args, X.shape[1])
    est.set_params(verbose=False)
    if args.svm_type == 2:
        raise ValueError("-s 2: a one-class SVM has no labels to cross-validate")
    regression = args.svm_type in (3, 4)
    grid = {}
    for name, flag, text in (("C", "-log2c", args.log2c), ("gamma", "-log2g", args.log2g),
                             ("epsilon", "-log2p", args.log2p)):
        values = _powers_of_two(flag, text)
        if values is not None:
            if name == "epsilon" and args.svm_type != 3:
                raise ValueError("-log2p: epsilon is searched only for -s 3 (epsilon-SVR)")
            if name == "gamma" and args.kernel_type in (0, 4):
                continue
            grid[name] = values
    if getattr(args, "plot", None) and set(grid) != {"C", "gamma"}:
        raise ValueError(f"--plot draws a grid over C and gamma; this one searches {sorted(grid)}")
    if not regression:
        _, y = libsvm_class_order(*np.unique(y, return_inverse=True))
    search = SVMSearchCV(est, grid, cv=args.folds, scoring="neg_mean_squared_error" if regression else "accuracy",
                         n_jobs=args.jobs, prefer_fewer_sv=args.fewer_sv, random_state=0, refit=False)
    try:
        return search.fit(X, y, on_task=progress_callback("grid", "task", args.quiet))
    finally:
        release_workers()


def cell_rate(search, i, regression):
    """grid.py's rate of cell i: CV accuracy in percent, or the CV mean squared error."""
    score = search.cv_results_["mean_test_score"][i]
    return -score if regression else 100 * score


def table(search, regression):
    """The searched parameters' names, the table's header and its rows: per cell the log2 of
    each searched value, grid.py's rate and the mean #SV over the folds."""
    names = [n for n in ("C", "gamma", "epsilon") if n in search.cv_results_["params"][0]]
    header = [f"log2{n}" for n in names] + ["mse" if regression else "accuracy", "mean_n_support"]
    rows = [[*(np.log2(cell[n]) for n in names), cell_rate(search, i, regression),
             search.cv_results_["mean_n_support"][i]] for i, cell in enumerate(search.cv_results_["params"])]
    return names, header, rows


def write_table(path, header, rows):
    """The table as CSV; an existing file is replaced only once the new one is complete."""
    from svmkit.io.atomic import atomic_write

    with atomic_write(path, newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def run(args) -> int:
    check_outputs(args.out, args.plot)
    X, y, _ = read_data(args.data_file, precomputed=args.kernel_type == 4)
    search = search_grid(args, X, y)
    regression = args.svm_type in (3, 4)
    names, header, rows = table(search, regression)
    for row in rows:
        print(" ".join(f"{v:g}" for v in row[:-1]))
    best = search.best_params_
    if not args.quiet:  # stderr: stdout keeps grid.py's lines
        print("svmkit grid: " + ("the fewest support vectors within one standard error of the best mean score"
                                 if args.fewer_sv else "the best mean cross-validation score") + " chooses the cell",
              file=sys.stderr)
    print(" ".join(f"{best[n]:g}" for n in names), f"{cell_rate(search, search.best_index_, regression):g}")
    if args.out:
        write_table(args.out, header, rows)
    if args.plot:
        from svmkit.cli.plot import agg, save_png
        from svmkit.plot import cv_heatmap

        agg()
        print(f"Output picture: {save_png(cv_heatmap(search)[0], args.plot)}")
    return 0
