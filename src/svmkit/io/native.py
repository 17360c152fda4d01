"""svmkit's own model file: one file, a JSON header and the fitted arrays, loaded without
executing code.

Layout: the 8 bytes `SVMKIT\\x00\\x01`, the header length as 8 little-endian bytes, the UTF-8
JSON header {"format": …, "estimator": …, "params": …, "svmkit": …}, then a NumPy `.npz`
archive of the fitted arrays, read with `allow_pickle=False`.

Version 2 adds to the header "steps", a Pipeline's [{"name", "estimator", "params"}, …] whose
arrays are named `i/array` (step i), and "object_arrays", the arrays that were arrays of Python
strings (labels from a pandas column, `feature_names_in_`): stored as unicode arrays, given back
as object arrays. A file that needs none of this is written as version 1, which older svmkit reads.

An estimator's `options` (svmkit.Options) are written as their fields that differ from the
defaults, among the parameters: the layout of the files written before Options, whose
`device`, `scheduler_address`, … parameters a load gathers into an Options.
"""

from __future__ import annotations

import io
import json
import numbers
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
from sklearn.pipeline import Pipeline

from svmkit.io.atomic import atomic_write
from svmkit._version import __version__
from svmkit.exceptions import ModelFileError
from svmkit.io.state import ESTIMATORS, SCALERS, get_state, set_state
from svmkit.options import FIELDS, Options

MAGIC = b"SVMKIT\x00\x01"
#: What reading a damaged `.npz` raises: the zip layer (BadZipFile, zlib.error, EOFError, KeyError
#: for a member named in the directory but absent, NotImplementedError for an unknown compression,
#: RuntimeError for an "encrypted" member), numpy's `.npy` parser (ValueError, also for a pickle).
_DECODE_ERRORS = (ValueError, OSError, EOFError, KeyError, RuntimeError, NotImplementedError, zipfile.BadZipFile,
                  zlib.error, struct.error, OverflowError)
#: Version of this layout; files from a newer version are refused with a message that says so.
FORMAT_VERSION = 2
#: What a file holds by name (a Pipeline of them besides).
SAVABLE = {**ESTIMATORS, **SCALERS}


def _encode_param(name, value):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, dict):
        return {"dict": [[_encode_param(name, k), _encode_param(name, v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [_encode_param(name, v) for v in value]}
    raise ValueError(f"cannot save parameter {name}={value!r}: only numbers, strings, None and dicts or tuples "
                     "of them can be stored without code (a callable kernel cannot)")


def _decode_param(name, value):
    """A parameter as `_encode_param` wrote it; a ValueError names any other JSON value."""
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("tuple"), list):
        return tuple(_decode_param(name, v) for v in value["tuple"])
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("dict"), list):
        pairs = [(_decode_param(name, item[0]), _decode_param(name, item[1])) for item in value["dict"]
                 if isinstance(item, list) and len(item) == 2]
        scalar = (type(None), bool, str, int, float)
        if len(pairs) == len(value["dict"]) and all(isinstance(k, scalar) for k, _ in pairs):
            return dict(pairs)
    raise ValueError(f"parameter {name} holds {value!r}, not a number, string, None or an encoded dict or tuple")


def _kind(est) -> str:
    """The class of `est` as an error names it, with the package of a foreign one."""
    cls = type(est)
    home = cls.__module__.split(".")[0]
    return cls.__name__ if home == "svmkit" else f"{cls.__name__} (from {home})"


def _unsavable(est, where="") -> ValueError:
    return ValueError(f"cannot save a {_kind(est)}{where}: svmkit model files hold svmkit's models "
                      f"({', '.join(ESTIMATORS)}), the scalers {', '.join(SCALERS)}, Pipelines of them and a fitted "
                      "search's best_estimator_; save the final estimator (search.best_estimator_, pipeline[-1]) "
                      "or use skops or joblib for other objects")


def _final(est):
    """What a file keeps of `est`: a fitted search's best estimator, else `est` itself."""
    if SAVABLE.get(type(est).__name__) is type(est) or type(est) is Pipeline:
        return est
    if hasattr(est, "best_estimator_"):
        return est.best_estimator_
    if hasattr(est, "get_params") and "refit" in est.get_params(deep=False):
        raise ValueError(f"cannot save a {_kind(est)} without best_estimator_: fit it with refit=True, then "
                         "save(search) keeps search.best_estimator_")
    raise _unsavable(est)


def _describe(est, prefix, arrays, where=""):
    """The header entry of `est`, {"estimator", "params"} and a Pipeline's "steps"; its arrays
    go into `arrays` under `prefix`."""
    if type(est) is Pipeline:
        steps = []
        for i, (name, step) in enumerate(est.steps):
            entry = ({"estimator": step} if _is_passthrough(step) else
                     _describe(step, f"{prefix}{i}/", arrays, f" (step {name!r} of a Pipeline)"))
            steps.append({"name": name, **entry})
        params = {k: v for k, v in est.get_params(deep=False).items() if k != "steps"}
        return {"estimator": "Pipeline", "params": _encode_params(params), "steps": steps}
    name = type(est).__name__
    if SAVABLE.get(name) is not type(est):
        raise _unsavable(est, where)
    if not hasattr(est, "n_features_in_"):
        raise ValueError(f"cannot save an unfitted {name}{where}: call fit first")
    arrays.update({prefix + key: value for key, value in get_state(est).items()})
    return {"estimator": name, "params": _encode_params(_flat(est.get_params()))}


def _is_passthrough(step) -> bool:
    return step is None or (isinstance(step, str) and step == "passthrough")


def _flat(params):
    """The parameters with `options` replaced by its fields that differ from the defaults."""
    options = params.pop("options", None)
    if options is not None and not isinstance(options, Options):
        raise ValueError(f"cannot save parameter options={options!r}: it must be None or an svmkit.Options")
    return {**params, **(options.changed() if options is not None else {})}


def _gathered(params):
    """The parameters with the fields of Options among them gathered into `options` (left out
    when they are all the defaults)."""
    options = Options(**{k: params.pop(k) for k in FIELDS if k in params})
    return {**params, "options": options} if options.changed() else params


def _encode_params(params):
    return {k: _encode_param(k, v) for k, v in params.items()}


def _as_unicode(key, value):
    """An object array of strings as a unicode array (NumPy reads that back without pickle)."""
    if not all(isinstance(v, str) for v in value.flat):
        types = sorted({type(v).__name__ for v in value.flat})
        raise ValueError(f"cannot save {key}: it holds Python objects of type {', '.join(types)}; a model file "
                         "keeps an object array only when it holds strings (no pickle)")
    stored = value.astype(str)
    if stored.tolist() != value.tolist():  # NumPy's unicode arrays drop trailing NUL characters
        raise ValueError(f"cannot save {key}: a string ending in a NUL character does not survive a unicode array")
    return stored


def save(est, path) -> None:
    """Write a fitted estimator to `path` atomically (an existing file survives a failed save).

    `est`: one of svmkit's models, scikit-learn's StandardScaler, MinMaxScaler or MaxAbsScaler,
    svmkit's LibsvmScaler, or a Pipeline of them; labels of any kind a fit takes (numbers,
    strings, bools, a pandas column's objects) and `feature_names_in_` are kept. A fitted search
    (SVMSearchCV, GridSearchCV, …) saves its `best_estimator_`: `load` gives back that estimator,
    not the search. Anything else raises a ValueError that names it.
    """
    arrays = {}
    header = _describe(_final(est), "", arrays)
    objects = [key for key, value in arrays.items() if value.dtype.kind == "O"]
    arrays.update({key: _as_unicode(key, arrays[key]) for key in objects})
    plain = header["estimator"] in ESTIMATORS and not objects and "feature_names_in_" not in arrays
    header = {"format": 1 if plain else FORMAT_VERSION, **header, "svmkit": __version__}
    if objects:
        header["object_arrays"] = objects
    blob = json.dumps(header).encode()
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    with atomic_write(path, "wb") as fh:
        fh.write(MAGIC)
        fh.write(len(blob).to_bytes(8, "little"))
        fh.write(blob)
        fh.write(buffer.getvalue())


def _check_entry(entry, depth=0):
    """Raise ValueError unless `entry` is a header entry `_describe` writes: a known estimator's
    name as a string, params an object, a Pipeline's steps a list of such entries."""
    if not isinstance(entry, dict) or not isinstance(entry.get("params", {}), dict):
        raise ValueError(f"an estimator entry must be an object with params an object, got {entry!r:.80}")
    name = entry.get("estimator")
    if not isinstance(name, str):
        raise ValueError(f"estimator must be a string, got {name!r:.80}")
    if name != "Pipeline":
        if name not in SAVABLE:
            raise KeyError(name)
        return
    steps = entry.get("steps")
    if not isinstance(steps, list) or not steps or depth > 8:
        raise ValueError("a Pipeline's steps must be a non-empty list")
    for step in steps:
        if not isinstance(step, dict) or not isinstance(step.get("name"), str):
            raise ValueError(f"a Pipeline step must be an object with a string name, got {step!r:.80}")
        if not _is_passthrough(step.get("estimator")):
            _check_entry(step, depth + 1)


def _build(entry, state, prefix):
    """The estimator of a header entry, given its arrays (taken out of `state`)."""
    params = {k: _decode_param(k, v) for k, v in entry.get("params", {}).items()}
    if entry["estimator"] == "Pipeline":
        steps = [(step["name"], step["estimator"] if _is_passthrough(step.get("estimator")) else
                  _build(step, state, f"{prefix}{i}/")) for i, step in enumerate(entry["steps"])]
        return Pipeline(steps, **params)
    est = SAVABLE[entry["estimator"]](**_gathered(params))
    own = [key for key in state if key.startswith(prefix) and "/" not in key[len(prefix):]]
    return set_state(est, {key[len(prefix):]: state.pop(key) for key in own})


def load(path):
    """Read an estimator saved by `save`; raises ModelFileError naming the file and the fault."""
    path = Path(path)
    blob = path.read_bytes()
    if blob[:len(MAGIC)] != MAGIC:
        raise ModelFileError(f"{path}: not an svmkit model file (it does not start with the svmkit signature)")
    start = len(MAGIC) + 8
    n = int.from_bytes(blob[len(MAGIC):start], "little")
    if len(blob) < start + n:
        raise ModelFileError(f"{path}: truncated model file (the header is cut short)")
    try:
        header = json.loads(blob[start:start + n])
        version, params = header["format"], header["params"]
        objects = header.get("object_arrays", [])
        if not isinstance(version, int) or version < 1 or not isinstance(params, dict):
            raise ValueError("format must be a positive integer and params an object")
        if not isinstance(objects, list) or not all(isinstance(key, str) for key in objects):
            raise ValueError("object_arrays must be a list of array names")
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelFileError(f"{path}: corrupt model header ({exc})") from None
    if version > FORMAT_VERSION:
        raise ModelFileError(f"{path}: written in model format version {version} by svmkit "
                             f"{header.get('svmkit', '?')}; this svmkit reads versions up to {FORMAT_VERSION}, "
                             "upgrade svmkit to read it")
    try:
        _check_entry(header)
    except KeyError as exc:
        raise ModelFileError(f"{path}: unknown estimator {exc.args[0]!r} (known: {sorted(SAVABLE)} and "
                             "Pipeline)") from None
    except ValueError as exc:
        raise ModelFileError(f"{path}: corrupt model header ({exc})") from None
    try:
        with np.load(io.BytesIO(blob[start + n:]), allow_pickle=False) as archive:
            state = {key: archive[key] for key in archive.files}
    except _DECODE_ERRORS as exc:
        raise ModelFileError(f"{path}: corrupt or truncated model arrays ({type(exc).__name__}: {exc})") from None
    try:
        for key in objects:
            if state[key].dtype.kind != "U":
                raise ValueError(f"{key}, listed in object_arrays, is not an array of strings")
            state[key] = np.array(state[key].tolist(), dtype=object).reshape(state[key].shape)
        est = _build(header, state, "")
        if state:
            raise ValueError(f"unknown arrays {sorted(state)}")
        return est
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError) as exc:
        raise ModelFileError(f"{path}: the model's parameters or arrays are inconsistent ({exc!r})") from None
