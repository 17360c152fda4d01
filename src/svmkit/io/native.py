"""svmkit's own model file: one file, a JSON header and the fitted arrays, loaded without
executing code.

Layout: the 8 bytes `SVMKIT\\x00\\x01`, the header length as 8 little-endian bytes, the UTF-8
JSON header {"format": …, "estimator": …, "params": …, "svmkit": …}, then a NumPy `.npz`
archive of the fitted arrays, read with `allow_pickle=False`.
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

from svmkit.backend import DEVICES
from svmkit.io.atomic import atomic_write
from svmkit._validation import check_choice
from svmkit._version import __version__
from svmkit.exceptions import ModelFileError
from svmkit.io.state import ESTIMATORS, get_state, set_state

MAGIC = b"SVMKIT\x00\x01"
#: What reading a damaged `.npz` raises: the zip layer (BadZipFile, zlib.error, EOFError, KeyError
#: for a member named in the directory but absent, NotImplementedError for an unknown compression,
#: RuntimeError for an "encrypted" member), numpy's `.npy` parser (ValueError, also for a pickle).
_DECODE_ERRORS = (ValueError, OSError, EOFError, KeyError, RuntimeError, NotImplementedError, zipfile.BadZipFile,
                  zlib.error, struct.error, OverflowError)
#: Version of this layout; files from a newer version are refused with a message that says so.
FORMAT_VERSION = 1


def _encode_param(name, value):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, dict):
        return {"dict": [[_encode_param(name, k), _encode_param(name, v)] for k, v in value.items()]}
    raise ValueError(f"cannot save parameter {name}={value!r}: only numbers, strings, None and dicts of "
                     "them can be stored without code (a callable kernel cannot)")


def _decode_param(value):
    if isinstance(value, dict):
        return {_decode_param(k): _decode_param(v) for k, v in value["dict"]}
    return value


def save(est, path) -> None:
    """Write a fitted estimator to `path` atomically (an existing file survives a failed save)."""
    name = type(est).__name__
    if name not in ESTIMATORS:
        raise ValueError(f"cannot save a {name}: svmkit model files hold {sorted(ESTIMATORS)}")
    if not hasattr(est, "n_features_in_"):
        raise ValueError(f"cannot save an unfitted {name}: call fit first")
    params = {k: _encode_param(k, v) for k, v in est.get_params().items()}
    header = json.dumps({"format": FORMAT_VERSION, "estimator": name, "params": params,
                         "svmkit": __version__}).encode()
    arrays = io.BytesIO()
    np.savez_compressed(arrays, **get_state(est))
    with atomic_write(path, "wb") as fh:
        fh.write(MAGIC)
        fh.write(len(header).to_bytes(8, "little"))
        fh.write(header)
        fh.write(arrays.getvalue())


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
        version, name, params = header["format"], header["estimator"], header["params"]
        if not isinstance(version, int) or version < 1 or not isinstance(params, dict):
            raise ValueError("format must be a positive integer and params an object")
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelFileError(f"{path}: corrupt model header ({exc})") from None
    if version > FORMAT_VERSION:
        raise ModelFileError(f"{path}: written in model format version {version} by svmkit "
                             f"{header.get('svmkit', '?')}; this svmkit reads versions up to {FORMAT_VERSION}, "
                             "upgrade svmkit to read it")
    if name not in ESTIMATORS:
        raise ModelFileError(f"{path}: unknown estimator {name!r} (known: {sorted(ESTIMATORS)})")
    try:
        with np.load(io.BytesIO(blob[start + n:]), allow_pickle=False) as archive:
            state = {key: archive[key] for key in archive.files}
    except _DECODE_ERRORS as exc:
        raise ModelFileError(f"{path}: corrupt or truncated model arrays ({type(exc).__name__}: {exc})") from None
    try:
        est = ESTIMATORS[name](**{k: _decode_param(v) for k, v in params.items()})
        # the one parameter prediction reads that preparing the model does not check
        check_choice(getattr(est, "device", "cpu"), "device", DEVICES)
        return set_state(est, state)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError) as exc:
        raise ModelFileError(f"{path}: the model's parameters or arrays are inconsistent ({exc!r})") from None
