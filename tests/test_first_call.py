"""`import svmkit` and the command line's parser load scikit-learn and the compiled core only
when a name or a command needs them; the public names still resolve on first use; no fit
compiles or imports a compiler."""

import json
import subprocess
import sys

import pytest

import svmkit

HEAVY = {"sklearn", "tqdm", "svmkit._core"}


def loaded_after(code):
    """The top-level packages a fresh interpreter has imported after running `code`."""
    report = ("import json, sys; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} | "
              "({'svmkit._core'} & set(sys.modules)))))")
    result = subprocess.run([sys.executable, "-c", f"{code}\n{report}"], capture_output=True, text=True, check=True)
    return set(json.loads(result.stdout.splitlines()[-1]))


@pytest.mark.parametrize("code", [
    "import svmkit",
    "import svmkit; dir(svmkit)",
    "import svmkit.models, svmkit.model_selection, svmkit.preprocessing, svmkit.registry",
    "from svmkit.exceptions import NotSeparableError",
    "from svmkit.cli.main import build_parser; build_parser()",
])
def test_loads_no_heavy_library(code):
    assert not loaded_after(code) & HEAVY


def test_first_use_imports_the_estimators():
    assert {"sklearn"} <= loaded_after("import svmkit; svmkit.SVC")


def test_public_names_resolve():
    from svmkit import SVC, NotSeparableError
    from svmkit.io.native import load
    from svmkit.models import NuSVR

    assert svmkit.SVC is SVC and svmkit.NuSVR is NuSVR and svmkit.load is load
    assert svmkit.NotSeparableError is NotSeparableError and issubclass(svmkit.TubeTooNarrowError, ValueError)
    assert all(getattr(svmkit, name) is not None for name in svmkit.__all__)


def test_every_public_estimator_is_a_top_level_name():
    import svmkit.model_selection
    import svmkit.models
    import svmkit.preprocessing
    from svmkit.models.band import HardBandSVR

    for package in (svmkit.models, svmkit.model_selection, svmkit.preprocessing):
        for name in package.__all__:
            assert getattr(svmkit, name) is getattr(package, name)
    assert svmkit.HardBandSVR is HardBandSVR


def test_the_bands_old_public_path_still_imports():
    """`svmkit.band` moved to svmkit.models.band; the README's import keeps working."""
    from svmkit.band import HardBandSVR, epsilon_inf
    from svmkit.models import band

    assert HardBandSVR is band.HardBandSVR and epsilon_inf is band.epsilon_inf
    assert svmkit.band.HardBandSVR is band.HardBandSVR


def test_star_import_gives_all():
    namespace = {}
    exec("from svmkit import *", namespace)
    assert set(svmkit.__all__) <= set(namespace)


def test_dir_lists_public_names_before_they_load():
    code = "import json, svmkit; print(json.dumps(dir(svmkit)))"
    names = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      check=True).stdout)
    assert set(svmkit.__all__) <= set(names)


def test_unknown_attribute_is_named():
    with pytest.raises(AttributeError, match="no_such_name"):
        svmkit.no_such_name  # noqa: B018


#: A fit of every family: SMO, closed form (dense and packed), LIBLINEAR's solvers.
EVERY_FAMILY = """
import numpy as np, svmkit
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 5)); y = np.where(X[:, 0] > 0, 1, -1)
for model in (svmkit.SVC(), svmkit.NuSVR(), svmkit.KernelRidge(), svmkit.LSSVC(), svmkit.LinearSVC(),
              svmkit.LinearSVC(penalty="l1", dual=False), svmkit.LinearSVR(), svmkit.KernelLogisticRegression()):
    model.fit(X, y)
"""


def test_no_fit_imports_a_compiler():
    """Every loop is compiled at install: fits load the core, and no JIT compiler."""
    loaded = loaded_after(EVERY_FAMILY)
    assert "svmkit._core" in loaded
    assert not loaded & {"numba", "llvmlite"}
