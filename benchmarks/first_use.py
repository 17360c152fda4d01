"""First use: what a new user waits for, from a fresh clone to each estimator's first fit.

    python benchmarks/first_use.py [--wheel PATH] [--estimators SVC,LinearSVC,...] [--repeat 3]

1. `git clone` of this repository's HEAD into a temporary folder, a new virtual environment,
   and the seconds of `pip install <clone>` in it (the extension compiled by the system's C++
   compiler; the dependencies from the registry or pip's cache). With `--wheel`, that wheel is
   installed instead, and the clone is not made.
2. In that environment, from a folder outside any source tree and with no PYTHONPATH, the wall
   time of a new process running `python -c "import sklearn.svm"` (the fastest of --repeat),
   then, for every estimator, the wall time of a new process that loads heart_scale (saved
   as .npy beforehand) and fits it, also the fastest of --repeat. Each such process checks
   that `numba` is neither installed nor imported.

The goal: every first fit within `import sklearn.svm` + 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import write  # beside this script, whose folder is on sys.path
from svmkit import registry

ROOT = Path(__file__).resolve().parent.parent
HEART = ROOT / "tests" / "data" / "heart_scale"
#: Every model the registry declares (not the searches, nor the scaler).
ESTIMATORS = tuple(name for name, entry in registry.ESTIMATORS.items()
                   if entry.kind in ("classifier", "regressor", "outlier"))
#: The regressors fit a ramp in [-1, 1] (the classifiers heart_scale's labels).
REGRESSORS = {name for name, entry in registry.ESTIMATORS.items() if entry.kind == "regressor"}
#: Parameters an estimator needs on these targets: the hard band must be wider than the best
#: linear fit's largest residual.
NEEDS = {"HardBandSVR": "epsilon=2.0"}
#: What each first-fit process runs; {name}, {home}, {target} and {params} filled per estimator.
FIRST_FIT = """
import importlib.util, sys
import numpy as np
import svmkit
home = {home}
X, y = np.load("X.npy"), np.load("{target}.npy")
home.{name}({params}).fit(X, y)
assert importlib.util.find_spec("numba") is None and "numba" not in sys.modules, "numba is there"
"""
#: Seconds a first fit may take beyond `import sklearn.svm`.
ALLOWANCE = 0.5


def _run(args, **kwargs):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)


def install(venv: Path, wheel: str | None) -> tuple[str, float]:
    """A new environment with svmkit installed from a fresh clone (or `wheel`); returns what was
    installed and the seconds of the `pip install`."""
    _run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    _run(pip + ["--upgrade", "pip"])
    if wheel is None:
        clone = venv.parent / "clone"
        _run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)])
        target, what = str(clone), "pip install <fresh clone>"
    else:
        target, what = str(Path(wheel).resolve()), f"pip install {Path(wheel).name}"
    start = time.perf_counter()
    _run(pip + [target])
    return what, time.perf_counter() - start


def process_seconds(python: Path, code: str, folder: Path, repeat: int) -> float:
    """The fastest wall time of `repeat` new processes running `code` in `folder`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        _run([str(python), "-c", code], cwd=folder, env=env)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", help="install this wheel instead of a fresh clone")
    parser.add_argument("--estimators", default=",".join(ESTIMATORS))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from sklearn.datasets import load_svmlight_file
    import numpy as np

    print(f"# {os.cpu_count()} cores; Python {sys.version.split()[0]}")
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        what, seconds = install(tmp / "venv", args.wheel)
        print(f"{what}: {seconds:.1f} s", flush=True)
        table.append({"what": what, "seconds": seconds})
        python = tmp / "venv" / "bin" / "python"
        work = tmp / "work"
        work.mkdir()
        X, y = load_svmlight_file(str(HEART))
        np.save(work / "X.npy", X.toarray())
        np.save(work / "y.npy", y)
        np.save(work / "ramp.npy", np.linspace(-1.0, 1.0, y.size))
        base = process_seconds(python, "import sklearn.svm", work, args.repeat)
        print(f"python -c 'import sklearn.svm': {base:.2f} s", flush=True)
        table.append({"what": "import sklearn.svm", "seconds": base})
        over = []
        for name in args.estimators.split(","):
            home = "svmkit"
            target = "ramp" if name in REGRESSORS else "y"
            code = FIRST_FIT.format(home=home, name=name, target=target, params=NEEDS.get(name, ""))
            seconds = process_seconds(python, code, work, args.repeat)
            verdict = "ok" if seconds <= base + ALLOWANCE else "OVER"
            if verdict != "ok":
                over.append(name)
            print(f"first fit on heart_scale in a new process: {name:26s} {seconds:5.2f} s  "
                  f"({seconds - base:+.2f} s over the import; {verdict})", flush=True)
            table.append({"what": f"first fit: {name}", "seconds": seconds})
    print(f"every first fit within import sklearn.svm + {ALLOWANCE} s: {'yes' if not over else 'no: ' + ', '.join(over)}")
    write("first_use", table, notes="A fresh install and each estimator's first fit on heart_scale, each in a new "
          f"process (the fastest of {args.repeat}), against a process that only imports sklearn.svm; numba "
          "neither installed nor imported.",
          plots=[{"kind": "bars", "value": "seconds", "label": ["what"], "xlabel": "seconds"}])


if __name__ == "__main__":
    main()
