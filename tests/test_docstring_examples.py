"""The Examples sections of the public estimators, the scaler and the data loader' docstrings run and print what they say."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["svmkit.models.smo.svc", "svmkit.models.smo.nusvc", "svmkit.models.smo.svr",
                                    "svmkit.models.smo.one_class", "svmkit.models.dense.ridge", "svmkit.models.dense.lssvm", "svmkit.models.dense.klr",
                                    "svmkit.models.linear.svm",
                                    "svmkit.model_selection.loo", "svmkit.preprocessing.scaler", "svmkit.io.data",
                                    "svmkit.options"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0
    assert result.failed == 0
