"""`svmkit update MODEL NEW_DATA [--forget ROWS] [-o OUT]`: a model saved in svmkit's native
format with its training rows (keep_data=True or partial_fit) forgets ROWS, then learns the rows
of NEW_DATA (a LIBSVM data file), by the estimator's `forget` and `partial_fit`; the updated model
replaces OUT (default MODEL) atomically."""

from __future__ import annotations

from svmkit.cli.common import check_inputs, check_outputs, read_data


def add_parser(sub):
    p = sub.add_parser("update", help="add rows to (and forget rows of) a native model file that keeps its rows",
                       usage="svmkit update MODEL NEW_DATA [--forget ROWS] [-o OUT]")
    p.add_argument("model", metavar="MODEL", help="svmkit's native model file, saved with its training rows")
    p.add_argument("new_data", metavar="NEW_DATA", help="the rows to add, a LIBSVM data file")
    p.add_argument("--forget", metavar="ROWS", type=rows,
                   help="row numbers to forget, from 0 in the order the model saw them, comma-separated (e.g. 0,5,9)")
    p.add_argument("-o", "--output", metavar="OUT", help="where the updated model goes (default MODEL)")
    p.set_defaults(run=run)


def rows(text: str) -> list[int]:
    """Row numbers from a comma list ('0,5,9'); argparse reports the ValueError of a bad one."""
    items = text.split(",")
    if not all(item.strip().isdigit() for item in items):
        raise ValueError(text)
    return [int(item) for item in items]


rows.__name__ = "comma list of row numbers"  # argparse's wording: "invalid comma list of row numbers value"


def _new_rows(est, path):
    """NEW_DATA's rows in the layout and width of the model's rows: a file whose last features
    are all zero is narrower (padded, as LIBSVM reads it); a wider one is refused."""
    import scipy.sparse as sp

    from svmkit.io.data import pad_columns

    X, y, _ = read_data(path)
    n = est.n_features_in_
    if X.shape[1] > n:
        raise ValueError(f"{path} has {X.shape[1]} features, the model {n}: an update keeps the model's features")
    X = pad_columns(X, n) if X.shape[1] < n else X
    return (X if sp.issparse(est.retained_X_) else X.toarray() if sp.issparse(X) else X), y


def run(args) -> int:
    out = args.output or args.model
    check_outputs(out)
    check_inputs(args.model, args.new_data)
    from svmkit.io.native import MAGIC, load, save
    from svmkit.models.retained import require_retained

    with open(args.model, "rb") as fh:
        if not fh.read(len(MAGIC)).startswith(MAGIC):
            raise ValueError(f"{args.model} is not svmkit's native model file: LIBSVM and LIBLINEAR model files keep "
                             "no training rows to update")
    est = load(args.model)
    require_retained(est, "svmkit update")
    X, y = _new_rows(est, args.new_data)
    before = est.retained_X_.shape[0]
    if args.forget:
        est.forget(args.forget)
    est.partial_fit(X, y)
    save(est, out)
    print(f"{out}: {est.retained_X_.shape[0]} rows ({before} kept before, {len(args.forget or ())} forgotten, "
          f"{X.shape[0]} added)")
    return 0
