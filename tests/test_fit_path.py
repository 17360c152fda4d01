"""The way of one fit through the package: `SVC().fit` passes through few files, few of them
models, and never calls from a lower layer back up into a higher one (a callback counts)."""

import os
import sys
import threading

import svmkit
from conftest import heart_scale
from test_layers import LAYERS

ROOT = os.path.dirname(svmkit.__file__)


def _layer(rel: str) -> int:
    """The layer of a file of the package (its path relative to the package)."""
    first = rel.split(os.sep)[0]
    return LAYERS[first[:-3] if first.endswith(".py") else first]


def _trace(fit, *args):
    """The package files the call passes through, and every call from a file to one of a
    higher layer, as (caller, callee)."""
    files, upward = set(), set()

    def profile(frame, event, arg):
        if event != "call" or not frame.f_code.co_filename.startswith(ROOT):
            return
        callee = os.path.relpath(frame.f_code.co_filename, ROOT)
        files.add(callee)
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename.startswith(ROOT):
            source = os.path.relpath(caller.f_code.co_filename, ROOT)
            if _layer(source) < _layer(callee):
                upward.add((f"{source}:{caller.f_code.co_name}", f"{callee}:{frame.f_code.co_name}"))

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        fit(*args)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return files, upward


def test_an_svc_fit_passes_through_at_most_12_files_3_of_them_models_and_only_downward():
    X, y = heart_scale()
    svmkit.SVC().fit(X, y)  # the imports of a first fit
    model = svmkit.SVC()
    files, upward = _trace(model.fit, X, y)
    models = sorted(f for f in files if f.startswith("models"))
    assert len(files) <= 12, sorted(files)
    assert len(models) <= 3, models
    assert upward == set()
    assert model.score(X, y) > 0.8
