"""LIBSVM / svmlight data files: `label [qid:N] index:value ...` per line, `#` starts a comment.

Loading runs scikit-learn's compiled parser; only when it fails, or when the file holds
something that parser accepts and LIBSVM does not, a line-by-line scan finds the offending
token and raises DataFormatError naming file, line and column (both 1-based).
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import re
import zlib

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, check_consistent_length

from svmkit._validation import check_int
from svmkit.exceptions import DataFormatError
from svmkit.io.atomic import atomic_write

#: LIBSVM reads feature indices into a C int.
_INDEX_MAX = np.iinfo(np.int32).max
_TOKEN = re.compile(rb"\S+")
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open}


def _fail(path, problem, line=None, column=None):
    where = [os.fspath(path)] + [f"{name} {n}" for name, n in (("line", line), ("column", column))
                                 if n is not None]
    raise DataFormatError(f"{', '.join(where)}: {problem}")


def _show(token: bytes) -> str:
    return repr(token.decode("utf-8", "replace"))


def _number(text: bytes, kind):
    """`kind(text)` as C's strtod/strtol read it, or None; Python alone would read '1_0' as 10."""
    if b"_" in text:
        return None
    try:
        return kind(text)
    except ValueError:
        return None


def parse_feature(token, prev, first, n_features):
    """(index, problem) of one `index:value` token; problem is None when LIBSVM accepts it.
    Indices start at `first`, must exceed `prev` and stay within `n_features` (None: no bound)."""
    index_text, colon, value_text = token.partition(b":")
    index = _number(index_text, int)
    if not colon:
        problem = f"token {_show(token)} is not of the form index:value"
    elif index is None:
        problem = f"feature index {_show(index_text)} is not an integer"
    elif index < first:
        problem = (f"feature index {index} is not positive (LIBSVM indices start at 1)" if first
                   else f"feature index {index} is negative")
    elif index <= prev:
        problem = (f"feature index {index} does not exceed the previous index {prev} "
                   "(indices must be strictly ascending)")
    elif index > _INDEX_MAX:
        problem = f"feature index {index} does not fit in a 32-bit int"
    elif n_features is not None and index >= n_features + first:
        problem = f"feature index {index} is beyond n_features={n_features}"
    elif _number(value_text, float) is None:
        problem = f"feature value {_show(value_text)} of index {index} is not a number"
    else:
        problem = None
    return index, problem


def _line_problem(tokens, first, n_features, query_id):
    """(column, problem) for the first bad token of a data line, or None."""
    (column, label), *features = tokens
    if b":" in label:
        return column, f"missing label (the line starts with the feature {_show(label)})"
    if _number(label, float) is None:
        return column, f"label {_show(label)} is not a number"
    # as scikit-learn: a first feature starting with 'qid' is the query id, read only if asked for
    if features and features[0][1].startswith(b"qid"):
        column, token = features.pop(0)
        _, colon, value = token.partition(b":")
        if not colon or (query_id and _number(value, int) is None):
            return column, f"query id {_show(token)} is not of the form qid:integer"
    elif query_id:
        return column + len(label) + 1, "missing qid:N after the label"
    prev = first - 1
    for column, token in features:
        prev, problem = parse_feature(token, prev, first, n_features)
        if problem:
            return column, problem
    return None


def _check_lines(content, path, n_features, zero_based, query_id):
    """Scan the file line by line; raise DataFormatError at the first token LIBSVM rejects."""
    first = 0 if zero_based else 1
    n_data = 0
    for lineno, line in enumerate(io.BytesIO(content), 1):
        tokens = [(m.start() + 1, m.group()) for m in _TOKEN.finditer(line.split(b"#", 1)[0])]
        if tokens:
            n_data += 1
            found = _line_problem(tokens, first, n_features, query_id)
            if found:
                _fail(path, found[1], lineno, found[0])
    if not n_data:
        _fail(path, "no data lines (the file is empty or holds only comments and blank lines)")


def _read(path) -> bytes:
    """The file's bytes, decompressed for .gz and .bz2 as scikit-learn does."""
    opener = _OPENERS.get(os.path.splitext(os.fspath(path))[1])
    if opener is None:
        with open(path, "rb") as f:
            return f.read()
    with opener(path, "rb") as f:
        try:
            return f.read()
        except (EOFError, OSError, zlib.error) as exc:  # a truncated or damaged stream
            _fail(path, f"cannot decompress it ({exc})")


def _zero_indexed(content) -> bool:
    """scikit-learn's zero_based='auto' test of one file: whether it has an index 0, or no
    index at all (a file it cannot parse tells nothing: the load then names its fault)."""
    from sklearn.datasets import load_svmlight_file

    try:
        X = load_svmlight_file(io.BytesIO(content), zero_based=True)[0]
    except (ValueError, OverflowError):
        return False
    return X.indices.size == 0 or int(X.indices.min()) == 0


def _load_one(path, content, n_features, zero_based, dtype, query_id):
    # sklearn.datasets imports every data set loader with it: only when reading
    from sklearn.datasets import load_svmlight_file

    try:
        X, y, *qid = load_svmlight_file(io.BytesIO(content), n_features=n_features, dtype=dtype,
                                        zero_based=zero_based, query_id=query_id)
    except (ValueError, OverflowError) as exc:
        _check_lines(content, path, n_features, zero_based, query_id)
        _fail(path, str(exc))  # nothing LIBSVM rejects was found: pass scikit-learn's reason on
    # what the compiled parser lets through: '1_0' read as 10, no data, lines without qid
    if b"_" in content or not X.shape[0] or (query_id and qid[0].size != X.shape[0]):
        _check_lines(content, path, n_features, zero_based, query_id)
    if max(X.nnz, X.shape[1]) <= _INDEX_MAX:
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
    return X, y, *qid


def load_svmlight_files(paths, n_features=None, zero_based=False, dtype=np.float64, query_id=False,
                        dense=False):
    """Load several LIBSVM files into matrices of one width: `n_features`, or the largest index.

    Returns [X1, y1, X2, y2, ...] ([X1, y1, qid1, ...] with `query_id`). X is CSR (int32 indices
    when they fit) or, with `dense`, an ndarray. Indices are 1-based, 0-based with `zero_based`;
    with zero_based='auto', 0-based when some file has an index 0 (or none), as scikit-learn's
    load_svmlight_files. `qid:N` after a label is read, and checked, only with `query_id`;
    otherwise it is skipped.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise ValueError(f"paths must be a list of paths, got the single path {paths!r}")
    if n_features is not None and check_int(n_features, "n_features") < 1:
        raise ValueError(f"n_features must be a positive integer or None, got n_features={n_features!r}")
    if not (isinstance(zero_based, (bool, np.bool_)) or (isinstance(zero_based, str) and zero_based == "auto")):
        raise ValueError(f"zero_based must be True, False or 'auto', got zero_based={zero_based!r}")
    contents = [_read(p) for p in paths]
    if isinstance(zero_based, str):
        zero_based = any(_zero_indexed(c) for c in contents)
    loaded = [_load_one(p, c, n_features, bool(zero_based), dtype, query_id) for p, c in zip(paths, contents)]
    width = n_features or max(X.shape[1] for X, *_ in loaded)
    result = []
    for X, *rest in loaded:
        X.resize((X.shape[0], width))
        result += [X.toarray() if dense else X, *rest]
    return result


def load_svmlight(path, n_features=None, zero_based=False, dtype=np.float64, query_id=False, dense=False):
    """Load one LIBSVM / svmlight data file: lines `label index:value ...`.

    Parameters
    ----------
    path : str or path-like
        The file to read.
    n_features : int or None, default=None
        Width of X; None takes the largest index in the file. An index past it is an error.
    zero_based : bool or 'auto', default=False
        Whether indices count from 0 (LIBSVM's files count from 1); 'auto': from 0 when the
        file has an index 0, as scikit-learn's load_svmlight_file.
    dtype : numpy dtype, default=float64
        Type of X's values.
    query_id : bool, default=False
        Read `qid:N` after the label and return it as a third array.
    dense : bool, default=False
        Return X as an ndarray instead of CSR.

    Returns
    -------
    X : scipy.sparse.csr_matrix or ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    qid : ndarray of shape (n_samples,), only with `query_id`

    Raises
    ------
    DataFormatError
        A malformed line, naming the file, line and column.

    Examples
    --------
    >>> import os, tempfile
    >>> from svmkit import load_svmlight
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("+1 1:0.5 3:2\\n-1 2:1\\n")
    >>> X, y = load_svmlight(path, dense=True)
    >>> X
    array([[0.5, 0. , 2. ],
           [0. , 1. , 0. ]])
    >>> y
    array([ 1., -1.])
    """
    return tuple(load_svmlight_files([path], n_features, zero_based, dtype, query_id, dense))


def _shortest(value: float) -> str:
    """The shortest decimal that reads back as exactly `value`; integral values without '.0'."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def format_rows(X, heads, value_format=_shortest, trailing_space=False):
    """One text line per row of X (dense or sparse): its head, then its nonzeros as 1-based
    `index:value` in column order, space-separated; LIBSVM's own writers end every token,
    the last one too, with a space (`trailing_space`)."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    items = [f"{i}:{value_format(v)}" for i, v in zip((X.indices + 1).tolist(), X.data.tolist())]
    bounds = X.indptr.tolist()
    end = " \n" if trailing_space else "\n"
    for r, head in enumerate(heads):
        yield " ".join([head, *items[bounds[r]:bounds[r + 1]]]) + end


def dump_svmlight(X, y, path, query_id=None, comment=None) -> None:
    """Write X (dense or sparse) and y in LIBSVM format, replacing `path` atomically.

    Only nonzeros are written, with 1-based indices; numbers are the shortest decimals that read
    back exactly. `query_id` (integers) adds `qid:N` after each label; each line of `comment`
    becomes a line starting with `#` at the top.
    """
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    y = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y")
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}")
    if query_id is not None:
        query_id = np.asarray(query_id)
        if query_id.ndim != 1 or query_id.dtype.kind not in "iu":
            raise ValueError(f"query_id must be a one-dimensional array of integers, got dtype "
                             f"{query_id.dtype} and shape {query_id.shape}")
    check_consistent_length(X, y, query_id)
    with atomic_write(path) as f:
        if comment is not None:
            f.writelines(f"# {line}\n" for line in str(comment).splitlines())
        heads = [_shortest(v) for v in y.tolist()]
        if query_id is not None:
            heads = [f"{head} qid:{q}" for head, q in zip(heads, query_id.tolist())]
        f.writelines(format_rows(X, heads))


def pad_columns(M, n_columns):
    """M (dense or CSR) with zero columns appended up to n_columns."""
    if sp.issparse(M):
        M = sp.csr_matrix(M)
        return sp.csr_matrix((M.data, M.indices, M.indptr), shape=(M.shape[0], n_columns))
    return np.hstack([M, np.zeros((M.shape[0], n_columns - M.shape[1]))])
