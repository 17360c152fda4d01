"""
LIBSVM files and the command line
=================================

svmkit reads and writes LIBSVM's files: data files (``label index:value …``), svm-train's model
files and svm-scale's range files, and its ``svmkit`` command speaks svm-train's, svm-predict's
and svm-scale's flags (Chang & Lin 2011). This example runs a command-line session in a
temporary folder (scale, train, predict, model information), then reads the LIBSVM model file
back into Python and checks that its decision values are those of the model that wrote it.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import svmkit
from svmkit import load_svmlight
from svmkit.io.libsvm_model import load_libsvm_model, save_libsvm_model

# LIBSVM's heart_scale (270 × 13), from the repository root or from examples/, where the
# documentation runs the script.
HEART = (Path("data") if Path("data").is_dir() else Path("../data")).resolve() / "heart_scale"


env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(svmkit.__file__).parents[1]),
                                                      os.environ.get("PYTHONPATH", "")])}


def svmkit_command(*args, cwd):
    """Run `svmkit ARGS` (the installed script is `svmkit`; here its module) and print it."""
    print("$ svmkit " + " ".join(args))
    done = subprocess.run([sys.executable, "-m", "svmkit.cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    print(done.stdout.rstrip())
    return done.stdout


with tempfile.TemporaryDirectory() as folder:
    svmkit_command("scale", "-l", "-1", "-u", "1", "-s", "heart.range", str(HEART), cwd=folder)
    svmkit_command("train", "-q", "-c", "4", "-g", "0.1", str(HEART), "heart.model", cwd=folder)
    svmkit_command("train", "-q", "-v", "5", "-c", "4", "-g", "0.1", str(HEART), cwd=folder)
    svmkit_command("predict", str(HEART), "heart.model", "heart.out", cwd=folder)
    svmkit_command("info", "heart.model", cwd=folder)

    X, y = load_svmlight(HEART)
    from_file = load_libsvm_model(Path(folder) / "heart.model")
    in_python = svmkit.SVC(C=4, gamma=0.1).fit(X, y)
    save_libsvm_model(in_python, Path(folder) / "again.model")
    again = load_libsvm_model(Path(folder) / "again.model")

f_python, f_file, f_again = (m.decision_function(X) for m in (in_python, from_file, again))
# A LIBSVM file lists the classes in the order of their first appearance in the data (1, -1
# here) and f > 0 votes the second of classes_, as in scikit-learn: the file's f is the
# Python fit's with the sign of that order.
f_file = f_file if list(from_file.classes_) == list(in_python.classes_) else -f_file
print(f"classes in the file: {from_file.classes_.tolist()}, in the Python fit: {in_python.classes_.tolist()}")
print(f"largest |f(command line model) - f(Python fit)|: {np.abs(f_file - f_python).max():.2e}")
print(f"largest |f(saved and loaded) - f(Python fit)|:   {np.abs(f_again - f_python).max():.2e}")

fig, ax = plt.subplots(figsize=(5, 4.5), layout="constrained")
ax.scatter(f_python, f_file, s=10, c=y, cmap="coolwarm", edgecolors="k", linewidths=0.3)
ax.plot([f_python.min(), f_python.max()], [f_python.min(), f_python.max()], "k", lw=0.8)
ax.set_xlabel("f(x), SVC fitted in Python")
ax.set_ylabel("f(x), model file written by svmkit train")
ax.set_title("heart_scale: the same decision values")
plt.show()
