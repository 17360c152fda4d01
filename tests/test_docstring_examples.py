"""The Examples sections of the public estimators, the scaler and the data loader' docstrings run and print what they say."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["svmkit.models.svc", "svmkit.models.nusvc", "svmkit.models.svr",
                                    "svmkit.models.one_class", "svmkit.models.ridge", "svmkit.models.lssvm", "svmkit.models.klr",
                                    "svmkit.models.linear",
                                    "svmkit.model_selection.loo", "svmkit.preprocessing.scaler", "svmkit.io.data",
                                    "svmkit.options"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0
    assert result.failed == 0
