"""Fuzzing harness (issue 41): bad inputs and parameters for every public estimator, damaged data
and model files for the readers, bad arguments for the command line.

A case is a JSON-able dict drawn by Hypothesis (`draw_cases`). `run_cases` runs cases in worker
processes (this module run as a script) under a time limit per case: a worker reports each case
as it starts and ends, so a hang (past the limit) or a crash (the process dies) is the started
case's; such a case is run again alone in a fresh worker before it is so classed. `classify_*`
give each case one outcome:

- correct: the call completed and its output checks out (finite, of the right shape and classes,
  equal to an oracle where one is cheap: LIBSVM through scikit-learn, scikit-learn's kernel ridge
  and svmlight reader, the same fit on unscaled data, the file's own model before the damage);
- clear: an svmkit exception, or a ValueError / TypeError / OSError whose message names what is
  wrong (an injected parameter, a data fault's words, the file) and is none of the errors of
  code that went astray (`UNCLEAR_TYPES`, `UNCLEAR_MESSAGES`);
- silent_wrong: it completed, but the output is non-finite, of the wrong shape or classes,
  contradicts the oracle, or came with NumPy's floating-point warnings only, or the input was
  one that must be refused (a NaN parameter, NaN data, a wrong shape);
- unclear: any other error, a traceback from the command line;
- hang: past the time limit; crash: killed by a signal, a non-Python exit, or MemoryError.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import math
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from pathlib import Path

from svmkit import registry

OUTCOMES = ("correct", "clear", "silent_wrong", "unclear", "hang", "crash")
CLEAN = ("correct", "clear")
DATA = Path(__file__).parent / "data"
NAN, INF = float("nan"), float("inf")

# --------------------------------------------------------------------------- case generation

# every public estimator of svmkit.registry
CLASSIFIERS, REGRESSORS = registry.of_kind("classifier"), registry.of_kind("regressor")
ESTIMATORS = CLASSIFIERS + REGRESSORS + registry.of_kind("outlier") + registry.of_kind("transformer") + \
    registry.of_kind("search")
SMO = registry.models("smo")

FLOATS = (NAN, INF, -INF, 0.0, -1.0, 1e-300, 5e-324, 1e-12, 1e-3, 0.5, 1.0, 10.0, 1e6, 1e20, 1e300, 1.7e308,
          -1e300, 2.0 ** 63)
INTS = (-10 ** 20, -2, -1, 0, 1, 2, 3, 7, 50, 10 ** 6, 2 ** 31, 2 ** 63, 10 ** 20)
OTHERS = ("abc", None, True, "1.0", [1.0])
KERNELS = ("rbf", "linear", "poly", "sigmoid", "precomputed", "laplacian", "foo", 3, None,
           "callable:good", "callable:nan", "callable:inf", "callable:shape", "callable:raise", "callable:list",
           "callable:huge", "callable:asym", "callable:sparse")
CLASS_WEIGHTS = ("balanced", "bogus", [[0, -1.0]], [[0, NAN]], [[1, INF]], [[0, 0.0]], [[0, 0.0], [1, 0.0]],
                 [[1, 1e300]], [[99, 1.0]],
                 [[0, 2.0]])

#: The parameters each estimator's cases vary, beyond its kernel and class weights.
NUMERIC = {
    "SVC": ("C", "gamma", "degree", "coef0", "tol", "max_iter", "cache_size"),
    "NuSVC": ("nu", "gamma", "degree", "coef0", "tol", "max_iter"),
    "SVR": ("C", "epsilon", "gamma", "degree", "coef0", "tol", "max_iter"),
    "NuSVR": ("C", "nu", "gamma", "degree", "coef0", "tol", "max_iter"),
    "OneClassSVM": ("nu", "gamma", "degree", "coef0", "tol", "max_iter"),
    "KernelRidge": ("alpha", "gamma", "degree", "coef0", "tol", "n_components"),
    "LSSVC": ("C", "gamma", "degree", "coef0", "tol", "n_components"),
    "LSSVR": ("C", "gamma", "degree", "coef0", "tol", "n_components"),
    "KernelLogisticRegression": ("C", "gamma", "degree", "coef0", "tol", "max_iter"),
    "LinearSVC": ("C", "tol", "max_iter", "intercept_scaling"),
    "LinearSVR": ("C", "epsilon", "tol", "max_iter", "intercept_scaling"),
    "HardBandSVR": ("epsilon", "tol", "max_iter"),
    "LibsvmScaler": ("lower", "upper", "y_lower", "y_upper"),
    "SVMSearchCV": ("cv", "n_jobs"),
    "KernelRidgeCV": ("degree", "coef0"),
    "LSSVMCV": (),
}
CHOICES = {
    "SVC": {"probability": (True,), "shrinking": (False,), "decision_function_shape": ("ovo", "bogus"),
            "break_ties": (True,), "random_state": (0, -1, "x")},
    "NuSVC": {"probability": (True,), "decision_function_shape": ("ovo",)},
    "SVR": {"probability": (True,), "shrinking": (False,)},
    "NuSVR": {"probability": (True,)},
    "OneClassSVM": {"probability": (True,)},
    "KernelRidge": {"solver": ("cholesky", "nystrom", "cg", "bogus"), "loo": (True,), "centers": ("kmeans", "x")},
    "LSSVC": {"multi_class": ("ovo", "bogus"), "solver": ("nystrom", "bogus"), "loo": (True,)},
    "LSSVR": {"solver": ("nystrom", "bogus"), "loo": (True,)},
    "KernelLogisticRegression": {"solver": ("nystrom", "bogus")},
    "LinearSVC": {"loss": ("hinge", "bogus"), "penalty": ("l1", "bogus"), "dual": (True, False, "x"),
                  "multi_class": ("crammer_singer", "bogus"), "fit_intercept": (False,)},
    "LinearSVR": {"loss": ("squared_epsilon_insensitive", "bogus"), "dual": (True, False), "fit_intercept": (False,)},
    "HardBandSVR": {"method": ("reduction", "bogus")},
    "SVMSearchCV": {"estimator": ("SVR", "NuSVC", "KernelRidge", "x"), "scoring": ("bogus", "accuracy", "r2"),
                    "backend": ("bogus", "loky"), "refit": (False,),
                    "param_grid": ([["C", [1.0, 10.0]]], [["C", [INF]]], [["C", [-1.0]]], [["C", [NAN]]],
                                   [["gamma", [0.0, 1e300]]], [["C", []]], [["bogus", [1.0]]], [["C", "x"]])},
    "KernelRidgeCV": {"alphas": ([NAN], [-1.0], [0.0], [INF], [], [1e-300, 1e300]),
                      "gammas": ([NAN], [-1.0], [0.0], [INF], [], [1e300]), "kernel": ("linear", "poly", "foo")},
    "LSSVMCV": {"Cs": ([NAN], [-1.0], [0.0], [INF], [], [1e300]), "gammas": ([NAN], [-1.0], [0.0], [1e300]),
                "estimator": ("LSSVR", "SVC")},
}
KERNELISED = set(SMO) | set(registry.models("dense"))

#: Data faults: name → words of which a clear error names one (None: valid data, no error due).
DATA_FAULTS = {
    "nan": r"NaN|nan|finite|infinit", "inf": r"NaN|nan|finite|infinit", "y_nan": r"NaN|nan|finite|infinit",
    "y_inf": r"NaN|nan|finite|infinit", "predict_nan": r"NaN|nan|finite|infinit",
    "n:0": r"\b0 sample|sample", "d:0": r"feature", "X_1d": r"2D|2-D|dimension|shape|reshape",
    "X_3d": r"2D|2-D|dimension|shape|dim", "y_short": r"inconsistent|sample|length|number",
    "X_str": r"string|convert|dtype|numeric|float", "X_object_none": r"convert|float|dtype|None|numeric|NaN",
    "X_complex": r"omplex", "predict_width": r"feature|column|shape|width",
    "y_2d": None, "n:1": r"class|sample|label|\b1\b|one|least", "n:2": r"class|sample|label|least",
    "one_class": r"class|label|least|one", "y_str": r"string|convert|dtype|numeric|float|label|class|continuous",
    "huge": r"overflow|large|finite|infinit|NaN|exceed|range|scale",
    "scale:1e-300": r"gamma|scale|small|large|underflow|overflow|finite|infinit",
    "scale:1e-160": r"gamma|scale|small|large|underflow|overflow|finite|infinit",
    "scale:1e150": r"gamma|scale|small|large|overflow|finite|infinit|range",
    "scale:1e200": r"gamma|scale|small|large|overflow|finite|infinit|range",
    "shift:1e15": r"gamma|scale|precision|large|overflow",
    "constant_X": r"constant|class|variance|kernel|margin|separat|tube", "constant_y": r"constant|class|label|least",
    "dup_rows": None, "X_int": None, "X_float32": None, "X_bool": None, "X_sparse": None, "X_list": None,
    "X_fortran": None, "y_float_labels": r"label|continuous|class", "predict_empty": r"0 sample|sample|empty",
    # issue 53's input classes: pandas' nullable, sparse and categorical columns, text columns,
    # non-canonical CSR, labels of mixed types or in a pandas Series or Categorical
    "X_Int64": None, "X_Float64": None, "X_boolean": None, "X_category": None, "X_sparse_frame": None,
    "X_csr_dup": None, "X_nullable_na": r"NaN|nan|missing", "X_str_frame": r"string|convert|dtype|numeric|float",
    "X_string_dtype": r"string|convert|dtype|numeric|float", "y_mixed": r"label|type|convert|float",
    "y_series": None, "y_category": None,
}
#: Faults that make X a pandas DataFrame or a non-canonical CSR matrix from the float array;
#: drawn alone among the faults that change X's type or values.
FRAME_FAULTS = ("X_Int64", "X_Float64", "X_boolean", "X_category", "X_sparse_frame", "X_csr_dup", "X_nullable_na",
                "X_str_frame", "X_string_dtype")
#: Text a callable kernel takes as given (scikit-learn's SVMs hand it the input unconverted).
TEXT_FAULTS = {"X_str", "X_str_frame", "X_string_dtype"}
#: Data faults that must be refused (the others may be fitted).
REFUSED_DATA = {"nan", "inf", "y_nan", "y_inf", "predict_nan", "n:0", "X_1d", "X_3d", "y_short", "X_str",
                "X_object_none", "X_complex", "predict_width", "d:0", "X_nullable_na", "X_str_frame",
                "X_string_dtype", "y_mixed"}


def _st():
    from hypothesis import strategies as st
    return st


def value_strategy(name):
    """Values for one parameter: the extremes of floats and ints, and things that are no number."""
    st = _st()
    base = st.sampled_from(FLOATS) | st.sampled_from(INTS) | st.sampled_from(OTHERS)
    if name == "gamma":
        base = base | st.sampled_from(("scale", "auto"))
    return base | st.floats(allow_nan=False, allow_infinity=False, width=64)


def estimator_case(what):
    st = _st()

    @st.composite
    def draw(draw):
        params = {}
        numeric = NUMERIC.get(what) or _numeric_defaults(what)
        for name in draw(st.lists(st.sampled_from(numeric), max_size=3, unique=True)) if numeric else []:
            params[name] = draw(value_strategy(name))
        if what in KERNELISED and draw(st.booleans()):
            params["kernel"] = draw(st.sampled_from(KERNELS))
        if what in CLASSIFIERS and draw(st.integers(0, 4)) == 0:
            params["class_weight"] = draw(st.sampled_from(CLASS_WEIGHTS))
        for name, values in CHOICES.get(what, {}).items():
            if draw(st.integers(0, 3)) == 0:
                params[name] = draw(st.sampled_from(values))
        faults = _compatible(draw(st.lists(st.sampled_from(sorted(DATA_FAULTS)), max_size=2, unique=True)))
        task = _task(what, params)
        if task == "multi" or (task == "binary" and draw(st.booleans())):
            task = draw(st.sampled_from(("binary", "multi"))) if task == "binary" else task
        return {"target": "estimator", "what": what, "params": params,
                "data": {"task": task, "seed": draw(st.integers(0, 3)), "faults": faults}}
    return draw()


def _numeric_defaults(what):
    """The parameters of a model NUMERIC does not name: those whose default is a number."""
    params = registry.load(registry.ESTIMATORS[what])().get_params()
    return tuple(sorted(k for k, v in params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)))


def _compatible(faults):
    """`faults` without those a frame fault (which converts the float array) cannot follow:
    other changes of X's type, and rescalings that integer and bool columns would round away."""
    frame = next((f for f in faults if f in FRAME_FAULTS), None)
    if frame is None:
        return faults
    return [f for f in faults if f == frame or not (f.startswith(("X_", "scale:", "shift:")) or f == "huge")]


def _task(what, params):
    inner = params.get("estimator", "SVC") if what in ("SVMSearchCV", "LSSVMCV") else what
    if inner in REGRESSORS + ("KernelRidgeCV", "LibsvmScaler"):
        return "regression"
    return "oneclass" if inner == "OneClassSVM" else "binary"


DATA_EDITS = ("nan", "inf", "-inf", "1e999", "1e-400", "0:1", "-1:2", "4294967296:1", "2000000000:1", "1:", "1",
              "::", "1:2:3", "abc", "", "qid:x", "\x00", "\xe9", "+", "1:1 1:1", "3:1 2:1", "0x1p3", "1_0",
              "\r", "#", "1:nan", "99999:1")
MODEL_EDITS = ("nan", "inf", "-inf", "-1", "0", "1e308", "1e999", "2000000000", "3000000000:1", "1.5", "abc", "",
               "1 2 3", "c_svc", "rbf", "-0", "\x00", "\xff", "1:1", "0:1", "2147483648", "9" * 30)


def file_case(kind):
    """A data or model file damaged by truncation, byte flips or an edited field."""
    st = _st()

    @st.composite
    def draw(draw):
        damage = []
        for _ in range(draw(st.integers(1, 2))):
            how = draw(st.sampled_from(("truncate", "flip", "field", "line")))
            if how == "truncate":
                damage.append(["truncate", draw(st.floats(0, 1))])
            elif how == "flip":
                damage.append(["flip", draw(st.floats(0, 1)), draw(st.integers(1, 255))])
            elif how == "field":
                damage.append(["field", draw(st.floats(0, 1)), draw(st.integers(0, 4)),
                               draw(st.sampled_from(DATA_EDITS if kind == "data" else MODEL_EDITS))])
            else:
                damage.append(["line", draw(st.floats(0, 1)), draw(st.sampled_from(("delete", "duplicate", "blank")))])
        case = {"target": "file", "what": kind, "damage": damage}
        if kind == "data":
            case["compress"] = draw(st.sampled_from((None, None, "gz", "bz2")))
            case["options"] = draw(st.sampled_from(({}, {}, {"zero_based": True}, {"zero_based": "auto"}, {"n_features": 5},
                                                    {"n_features": 0}, {"n_features": NAN}, {"dense": True})))
        else:
            case["model"] = draw(st.sampled_from(("svc", "svc_prob", "nusvc3", "svr", "oneclass", "precomputed")
                                                 if kind != "liblinear" else ("linear_svc", "linear_svr")))
            if kind == "native" and draw(st.integers(0, 2)) == 0:
                case["damage"] = [["array", draw(st.integers(0, 20)), draw(st.sampled_from(
                    ("nan", "inf", "shorter", "longer", "negative", "huge", "float", "2d", "drop", "empty")))]]
        return case
    return draw()


FLOAT_ARGS = ("nan", "inf", "-inf", "-1", "0", "1e-300", "1e300", "1e400", "abc", "", "0x10", "1_0", "0.5", "2")
INT_ARGS = ("-1", "0", "1", "2", "5", "100", "1e3", "x", "", "99999999999999999999")
RANGE_ARGS = ("2000,2001,1", "1,5,0", "5,1,1", "nan,1,1", "1,2", "x", "1,3,1", "-1,1,2", "1,inf,1", "null", "",
              "1e400,1,1")


def cli_case(command):
    """`svmkit COMMAND ...` with bad options and files. Paths are placeholders ({data}, {model},
    ...) that the worker fills in (see `_cli_files`)."""
    st = _st()
    data_files = st.sampled_from(("{data}", "{data}", "{bad_data}", "{missing}", "{dir}", "{empty}", "{model}",
                                  "{data_gz}"))
    model_files = st.sampled_from(("{model}", "{native}", "{prob_model}", "{bad_model}", "{data}", "{missing}",
                                   "{dir}", "{empty}", "{linear_model}"))

    @st.composite
    def draw(draw):
        options = []
        if command == "train":
            pool = {"-s": st.sampled_from(("0", "1", "2", "3", "4", "5", "-1", "x")),
                    "-t": st.sampled_from(("0", "1", "2", "3", "4", "5", "a")),
                    "-c": st.sampled_from(FLOAT_ARGS), "-g": st.sampled_from(FLOAT_ARGS),
                    "-d": st.sampled_from(INT_ARGS), "-r": st.sampled_from(FLOAT_ARGS),
                    "-n": st.sampled_from(FLOAT_ARGS), "-p": st.sampled_from(FLOAT_ARGS),
                    "-e": st.sampled_from(FLOAT_ARGS), "-m": st.sampled_from(FLOAT_ARGS),
                    "-h": st.sampled_from(("0", "1", "2")), "-b": st.sampled_from(("0", "1", "2")),
                    "-w1": st.sampled_from(FLOAT_ARGS), "-v": st.sampled_from(INT_ARGS),
                    "-B": st.sampled_from(FLOAT_ARGS), "--format": st.sampled_from(("native", "bogus"))}
            for flag in draw(st.lists(st.sampled_from(sorted(pool)), max_size=3, unique=True)):
                options += [flag, draw(pool[flag])]
            if draw(st.integers(0, 4)) == 0:
                options.append("--linear")
            args = [draw(data_files), draw(st.sampled_from(("{out}", "{out}", "{dir}", "{nodir}")))]
        elif command == "predict":
            if draw(st.booleans()):
                options += ["-b", draw(st.sampled_from(("0", "1", "2")))]
            args = [draw(data_files), draw(model_files), draw(st.sampled_from(("{out}", "{out}", "{dir}", "{nodir}")))]
        elif command == "scale":
            pool = {"-l": st.sampled_from(FLOAT_ARGS), "-u": st.sampled_from(FLOAT_ARGS),
                    "-s": st.sampled_from(("{out}", "{dir}", "{nodir}")),
                    "-r": st.sampled_from(("{range}", "{bad_data}", "{missing}", "{empty}", "{model}"))}
            for flag in draw(st.lists(st.sampled_from(sorted(pool)), max_size=3, unique=True)):
                options += [flag, draw(pool[flag])]
            if draw(st.integers(0, 3)) == 0:
                options += ["-y", draw(st.sampled_from(FLOAT_ARGS)), draw(st.sampled_from(FLOAT_ARGS))]
            args = [draw(data_files)]
        elif command == "info":
            args = [draw(model_files)]
        elif command == "grid":
            options = ["-q", "-log2c", draw(st.sampled_from(RANGE_ARGS + ("0,2,1",))),
                       "-log2g", draw(st.sampled_from(RANGE_ARGS + ("-2,0,1",))),
                       "-v", draw(st.sampled_from(("2", "3", "0", "1", "-1", "1000", "x"))),
                       "-j", draw(st.sampled_from(("1", "1", "0", "-5", "99999999999999999999")))]
            if draw(st.booleans()):
                options += ["-s", draw(st.sampled_from(("3", "4", "1", "2"))),
                            "-log2p", draw(st.sampled_from(RANGE_ARGS))]
            args = [draw(data_files)]
        elif command == "easy":
            options = ["-q", "-j", draw(st.sampled_from(("1", "0", "-1", "x"))), "-o", "{outdir}"]
            args = [draw(st.sampled_from(("{bad_data}", "{missing}", "{empty}", "{tiny}", "{dir}"))),
                    draw(st.sampled_from(("{tiny}", "{missing}", "{bad_data}")))]
        else:
            options = ["-o", draw(st.sampled_from(("{out}.png", "{dir}", "{nodir}.png"))),
                       "--dpi", draw(st.sampled_from(("10", "0", "-1", "100000", "x")))]
            args = [draw(model_files), draw(data_files)]
        return {"target": "cli", "what": command, "argv": [command, *options, *args]}
    return draw()


FILE_KINDS = ("data", "libsvm", "native", "liblinear")
#: Commands and how many of a command-line draw's cases each gets.
COMMANDS = {"train": 3, "predict": 2, "scale": 1, "info": 1, "grid": 1, "easy": 0.25, "plot": 0.5}
#: What each target draws: its kinds with their shares, and the strategy of one kind.
TARGETS = {"estimator": (dict.fromkeys(ESTIMATORS, 1), estimator_case),
           "file": (dict.fromkeys(FILE_KINDS, 1), file_case), "cli": (COMMANDS, cli_case)}


def draw_cases(n, seed=0, targets=("estimator", "file", "cli"), weights=(3, 2, 1)):
    """About `n` distinct cases drawn by Hypothesis with a fixed seed (the same list on every
    run), shared among the targets by `weights` and within a target among its kinds."""
    cases, seen = [], set()
    total = sum(w for t, w in zip(TARGETS, weights) if t in targets)
    for target, weight in zip(TARGETS, weights):
        if target in targets:
            kinds, strategy = TARGETS[target]
            for kind, share in kinds.items():
                want = max(1, round(n * weight / total * share / sum(kinds.values())))
                cases += _draw(strategy(kind), want, seed, seen)
    return cases


def _draw(strategy, want, seed, seen):
    """Up to `want` cases of `strategy` not in `seen` (JSON keys, updated)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    found = []

    @hypothesis_seed(seed)
    @settings(max_examples=want * 3, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(case):
        key = json.dumps(case, sort_keys=True)
        if key not in seen and len(found) < want:
            seen.add(key)
            found.append(case)

    collect()
    return found


# --------------------------------------------------------------------------- outcome classes

#: Error types that mean the code went astray, whatever their message.
UNCLEAR_TYPES = ("IndexError", "KeyError", "ZeroDivisionError", "OverflowError", "FloatingPointError",
                 "LinAlgError", "UnicodeDecodeError", "UnicodeEncodeError", "error", "BadZipFile", "EOFError",
                 "AttributeError", "AssertionError", "RuntimeError", "RecursionError", "NotImplementedError",
                 "JSONDecodeError", "TypingError", "NumbaError", "StopIteration", "UnboundLocalError", "NameError",
                 "struct.error", "SystemError", "LossySetitemError", "ArpackError", "QhullError")
#: Messages of NumPy, SciPy or Python internals that name no parameter, row or file.
UNCLEAR_MESSAGES = re.compile(
    r"cannot reshape|could not be broadcast|out of bounds|setting an array element|unsupported operand|"
    r"not supported between instances|object of type|'NoneType'|positional argument|cannot convert float|"
    r"int too large|math domain|zero-size array|of an empty sequence|has no len|not subscriptable|is not iterable|"
    r"must be real number, not|unhashable|Model error|HiGHS|inhomogeneous shape|buffer|ufunc|"
    r"only integer scalar|only length-1|truth value of an array|kernel values are too large")
#: The floating-point warnings NumPy gives where an overflow or a NaN went unchecked.
NUMPY_WARNINGS = re.compile(r"encountered in|Mean of empty slice|Degrees of freedom|divide by zero|"
                            r"invalid value|overflow")
CLEAR_TYPES = ("ValueError", "TypeError", "NotSeparableError", "TubeTooNarrowError", "ModelFileError",
               "DataFormatError", "NotFittedError", "FileNotFoundError", "IsADirectoryError", "PermissionError",
               "NotADirectoryError", "OSError", "InvalidParameterError")


def classify_error(exc, names, words=None):
    """'clear' when the error `exc` names one of `names` (parameters, whole words) or matches
    `words` (a regex of a data fault's or a file's words); otherwise 'unclear'."""
    kinds = [k.__name__ for k in type(exc).__mro__]
    message = str(exc)
    if isinstance(exc, MemoryError):
        return "crash"
    own = type(exc).__module__.startswith("svmkit") and isinstance(exc, (ValueError, TypeError))
    if any(k in UNCLEAR_TYPES for k in kinds[:-3]) or kinds[0] not in CLEAR_TYPES and not own:
        return "unclear"
    if UNCLEAR_MESSAGES.search(message):
        return "unclear"
    if kinds[0] in ("ModelFileError", "DataFormatError") and words is None:
        return "clear"
    if kinds[0] in ("NotSeparableError", "TubeTooNarrowError"):
        return "clear"
    # a list parameter (alphas, Cs, param_grid's C) is named by its items' name too
    names = [*names, *(n[:-1] for n in names if n.endswith("s") and len(n) > 1)]
    if any(re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])", message) for n in names):
        return "clear"
    if words and re.search(words, message):
        return "clear"
    return "unclear"


def numpy_warnings(caught):
    return [f"{w.category.__name__}: {w.message}" for w in caught
            if issubclass(w.category, RuntimeWarning) and NUMPY_WARNINGS.search(str(w.message))]


# --------------------------------------------------------------------------- the worker: estimators


def _resolve(value):
    """JSON → Python: a list of pairs stands for a dict (class weights, grids)."""
    if isinstance(value, list) and value and all(isinstance(p, list) and len(p) == 2 for p in value):
        return {k: _resolve(v) for k, v in value}
    return value


def _callable_kernel(kind):
    import numpy as np
    import scipy.sparse as sp

    def kernel(A, B):
        # a user's kernel on the rows it is given: sparse, a DataFrame, text (which it parses)
        A, B = (np.asarray(M.toarray() if sp.issparse(M) else M, dtype=float) for M in (A, B))
        if A.ndim == 2 and B.ndim == 2 and A.shape[1] != B.shape[1]:
            raise ValueError(f"kernel_{kind}: X has {A.shape[1]} features, the training rows {B.shape[1]}")
        K = A @ B.T
        if kind == "nan":
            K[0, 0] = np.nan
        elif kind == "inf":
            K[-1, 0] = np.inf
        elif kind == "shape":
            K = K[:, :-1]
        elif kind == "raise":
            raise ValueError("callable kernel refuses these rows")
        elif kind == "list":
            K = K.tolist()
        elif kind == "huge":
            K = K * 1e300
        elif kind == "asym":
            K = K + 0.1 * np.arange(K.shape[1])
        elif kind == "sparse":
            K = sp.csr_matrix(K)
        return K
    kernel.__name__ = f"kernel_{kind}"
    return kernel


def make_estimator(what, params):
    import svmkit

    params = {k: _resolve(v) for k, v in params.items()}
    if isinstance(params.get("kernel"), str) and params["kernel"].startswith("callable:"):
        params["kernel"] = _callable_kernel(params["kernel"].split(":")[1])
    cls = registry.load(registry.ESTIMATORS[what])
    if what in ("SVMSearchCV", "LSSVMCV"):
        inner = params.pop("estimator", "SVC" if what == "SVMSearchCV" else "LSSVC")
        inner = getattr(svmkit, inner, inner)
        inner = inner() if isinstance(inner, type) else inner
        if what == "SVMSearchCV":
            params.setdefault("param_grid", {"C": [1.0, 10.0], "gamma": ["scale"]})
            params.setdefault("cv", 3)
        else:
            params.setdefault("Cs", (1.0, 10.0))
            params.setdefault("gammas", (0.5, 2.0))
        return cls(inner, **params)
    if what == "KernelRidgeCV":
        params.setdefault("alphas", (0.1, 1.0))
        params.setdefault("gammas", (0.5, 2.0))
    return cls(**params)


def make_data(spec):
    """(X, y, X_predict) for a data spec: 30 rows of 3 features, then the faults applied."""
    import numpy as np
    import scipy.sparse as sp

    faults = spec["faults"]
    rng = np.random.default_rng(spec["seed"])
    n = min((int(f[2:]) for f in faults if f.startswith("n:")), default=30)  # n:0 with n:2 is n:0
    d = 0 if "d:0" in faults else 3
    X = rng.normal(size=(n, 3))
    if spec["task"] == "binary":
        y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
        y[: min(n, 2)] = [0, 1][: min(n, 2)]
    elif spec["task"] == "multi":
        y = np.argmax(X @ rng.normal(size=(3, 3)), axis=1)
        y[: min(n, 3)] = [0, 1, 2][: min(n, 3)]
    else:
        y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=n)
    X = X[:, :d]
    y = y.astype(float) if spec["task"] in ("regression", "oneclass") else y
    for f in faults:
        if f.startswith("scale:"):
            X = X * float(f[6:])
        elif f.startswith("shift:"):
            X = X + float(f[6:])
    if "constant_X" in faults:
        X[:] = 1.0
    cell = (min(1, max(n - 1, 0)), 0) if n and d else None
    if cell and "nan" in faults:
        X[cell] = np.nan
    if cell and "inf" in faults:
        X[cell] = np.inf
    if cell and "huge" in faults:
        X[cell] = 1e300
    if "constant_y" in faults or "one_class" in faults:
        y[:] = y[0] if n else y
    if "dup_rows" in faults and n > 1:
        X[1::2] = X[: n // 2 * 2: 2][: X[1::2].shape[0]]
    if n and "y_nan" in faults:
        y = y.astype(float)
        y[0] = np.nan
    if n and "y_inf" in faults:
        y = y.astype(float)
        y[0] = np.inf
    if "y_float_labels" in faults and spec["task"] != "regression":
        y = y + 0.5
    if "y_str" in faults:
        y = np.array([f"c{v}" for v in y])
    if "y_mixed" in faults and y.size:
        first = 0 if y.dtype.kind in "US" else "a"  # the first class of another type than the others
        y = y.astype(object)
        y[y == y[0]] = first
    Xp = X.copy()
    if "predict_nan" in faults and Xp.size:
        Xp[0, 0] = np.nan
    if "predict_width" in faults:
        Xp = np.hstack([Xp, np.ones((Xp.shape[0], 1))])
    if "predict_empty" in faults:
        Xp = Xp[:0]
    conversions = {"X_int": lambda A: np.round(A * 10).astype(np.int64) if (np.abs(A) < 1e15).all() else A,
                   "X_float32": lambda A: A.astype(np.float32), "X_bool": lambda A: A > 0,
                   "X_sparse": sp.csr_matrix, "X_list": lambda A: A.tolist(), "X_fortran": np.asfortranarray,
                   "X_str": lambda A: A.astype(str), "X_complex": lambda A: A + 1j,
                   "X_object_none": lambda A: np.where(np.arange(A.size).reshape(A.shape) == 0, None, A)}
    dense_only = {"X_str", "X_complex", "X_object_none", "X_1d", "X_3d"} & set(faults)
    for name, convert in conversions.items():
        if name in faults and not (name == "X_sparse" and dense_only) and not (name == "X_list" and sp.issparse(X)):
            X, Xp = convert(X), convert(Xp)
    if "X_1d" in faults and isinstance(X, np.ndarray):
        X = X.ravel()
    elif "X_3d" in faults and isinstance(X, np.ndarray) and X.ndim == 2:
        X = np.asarray(X)[:, :, None]
    if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "iufb":
        for fault in set(faults) & set(FRAME_FAULTS):
            X, Xp = _as_frame(X, fault, fit=True), _as_frame(Xp, fault, fit=False)
    if spec["task"] in ("binary", "multi") and "y_category" in faults:
        import pandas as pd
        y = pd.Series(pd.Categorical(y))
    elif "y_series" in faults or "y_category" in faults:
        import pandas as pd
        y = pd.Series(y)
    if "y_2d" in faults:
        y = np.asarray(y)[:, None]
    if "y_short" in faults:
        y = y[:-1]
    return X, y, Xp


def _as_frame(A, fault, fit):
    """The float array A as `fault` has it: a DataFrame of pandas' nullable, sparse or
    categorical columns, one of a column of text, or a CSR matrix storing each entry as two
    halves in shuffled order; `fit`: the training data (X_nullable_na puts its NA there only)."""
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp

    A = np.asarray(A, dtype=float)
    if fault == "X_csr_dup":
        rng = np.random.default_rng(A.shape[0])
        rows, cols = np.indices(A.shape).reshape(2, -1)
        order = np.lexsort((rng.random(2 * rows.size), np.tile(rows, 2)))
        data, indices = np.tile(A.ravel() / 2, 2)[order], np.tile(cols, 2)[order]
        indptr = np.r_[0, np.cumsum(np.full(A.shape[0], 2 * A.shape[1]))]
        return sp.csr_matrix((data, indices, indptr), shape=A.shape)

    def column(c, j):
        missing = [None if not np.isfinite(v) else v for v in c]
        if fault == "X_nullable_na" and fit and j == 0 and c.size > 1:
            missing[1] = None
        if fault == "X_Int64" and all(v is None or abs(v) < 1e14 for v in missing):
            return pd.array([None if v is None else int(round(v * 10)) for v in missing], dtype="Int64")
        if fault == "X_boolean":
            return pd.array([None if v is None else v > 0 for v in missing], dtype="boolean")
        if fault in ("X_Float64", "X_nullable_na", "X_Int64"):
            return pd.array(missing, dtype="Float64")
        if fault == "X_sparse_frame":
            return pd.arrays.SparseArray(c)
        if j > 0:
            return c
        if fault == "X_category":
            return pd.Categorical(np.round(c))
        text = [str(v) for v in c]
        return pd.array(text, dtype="string") if fault == "X_string_dtype" else np.array(text, dtype=object)

    return pd.DataFrame({f"x{j}": column(A[:, j], j) for j in range(A.shape[1])}, index=range(A.shape[0]))


def _invalid_params(what, params):
    """Names of parameters whose value no estimator may accept."""
    bad = []
    kernel = params.get("kernel", "rbf")
    used = {"degree": kernel == "poly", "coef0": kernel in ("poly", "sigmoid"),
            "gamma": kernel in ("rbf", "poly", "sigmoid", "laplacian")}
    for name, value in params.items():
        if not used.get(name, True):
            continue  # a kernel parameter the kernel does not use: either outcome is right
        if name in ("kernel",) and (value in ("foo", 3, None)):
            bad.append(name)
        if isinstance(value, float) and math.isnan(value):
            bad.append(name)
        if name == "class_weight" and isinstance(value, list) and any(
                not (w >= 0 and math.isfinite(w)) for _, w in value):
            bad.append(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if name in ("C", "gamma", "epsilon", "alpha") and value < 0:
                bad.append(name)
            if name == "nu" and not 0 < value <= 1:
                bad.append(name)
            if name in ("tol", "cache_size") and value < 0:
                bad.append(name)
            if name == "degree" and (value < 0 or value != int(value) if math.isfinite(value) else True):
                bad.append(name)
            if name == "C" and value == 0 and what not in ("KernelRidge",):
                bad.append(name)
        if value in ("abc", "1.0", "bogus", "x") and name not in ("random_state",):
            bad.append(name)
        if isinstance(value, list) and name in ("Cs", "gammas", "alphas") and (
                not value or any(not (v >= 0 and math.isfinite(v)) for v in value if isinstance(v, (int, float)))):
            bad.append(name)
    return bad


def _params_for_oracle(params):
    """The parameters, when every one is ordinary enough for LIBSVM or scikit-learn as an oracle."""
    ordinary = {"C": (1e-2, 1e3), "gamma": (1e-3, 1e2), "coef0": (-1.0, 1.0), "nu": (0.05, 0.9),
                "epsilon": (0.0, 1.0), "alpha": (1e-4, 1e3), "tol": (1e-6, 1e-3), "degree": (1, 4)}
    for name, value in params.items():
        if name in ordinary:
            low, high = ordinary[name]
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high) and not (
                    name == "gamma" and value in ("scale", "auto")):
                return None
        elif name == "kernel":
            if value not in ("rbf", "linear", "poly"):
                return None
        elif name not in ("cache_size", "shrinking", "max_iter") or (name == "max_iter" and value != -1):
            return None
    return params


def _oracle(what, params, X, y, predicted, est):
    """Messages for disagreements with an independent oracle, where one is cheap; [] otherwise."""
    import numpy as np
    import scipy.sparse as sp

    if _params_for_oracle(params) is None or what not in SMO + ("KernelRidge",):
        return []
    import sklearn.kernel_ridge
    import sklearn.svm

    Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    kwargs = dict(params)
    if what == "KernelRidge":
        oracle = sklearn.kernel_ridge.KernelRidge(**kwargs).fit(Xd, y).predict(Xd)
        scale = 1e-3 * (1 + np.abs(oracle).max())
        return [] if np.abs(oracle - predicted).max() <= scale else [
            f"predictions differ from scikit-learn's by {np.abs(oracle - predicted).max():.3g}"]
    kwargs.pop("max_iter", None)
    if not hasattr(sklearn.svm, what):  # a model LIBSVM has not (KernelQuantileRegressor): its own tests' oracle
        return []
    try:
        oracle = getattr(sklearn.svm, what)(**kwargs).fit(Xd, y).predict(Xd)
    except ValueError:  # LIBSVM's own fit failed (its non-finite coefficients): no oracle
        return []
    if what in ("SVR", "NuSVR"):
        worst = np.abs(oracle - predicted).max()
        return [] if worst <= 0.05 * np.ptp(y) + 1e-3 else [f"predictions differ from LIBSVM's by {worst:.3g}"]
    agree = np.mean(oracle == predicted)
    return [] if agree >= 0.9 else [f"predictions agree with LIBSVM's on {agree:.0%} of rows"]


def _check_output(what, est, X, y, Xp, spec):
    """Problems with a fitted estimator's output: non-finite, wrong shape, unknown classes."""
    import numpy as np

    problems = []
    m = Xp.shape[0] if hasattr(Xp, "shape") else len(Xp)
    if what == "LibsvmScaler":
        out = est.transform(Xp)
        out = out.toarray() if hasattr(out, "toarray") else np.asarray(out)
        if not np.isfinite(out).all():
            problems.append("transform gives non-finite values")
        back = est.inverse_transform(est.transform(Xp))
        back = back.toarray() if hasattr(back, "toarray") else np.asarray(back)
        Xd = np.asarray(Xp.toarray() if hasattr(Xp, "toarray") else Xp, dtype=float)
        spread = np.abs(est.feature_max_ - est.feature_min_) + np.abs(est.feature_min_) * 1e-3
        if back.shape != Xd.shape or (np.abs(back - Xd) > 1e-9 * spread).any():
            problems.append("inverse_transform does not give X back")
        return problems, None
    if getattr(est, "refit", True) is False:  # a search that keeps no model has nothing to predict
        return ([] if hasattr(est, "best_params_") else ["no best_params_"]), None
    pred = np.asarray(est.predict(Xp))
    if pred.shape != (m,) and not ("y_2d" in spec["faults"] and pred.shape == (m, 1)):  # a column y: one output
        problems.append(f"predict gives shape {pred.shape} for {m} rows")
    task = spec["task"]
    if task in ("binary", "multi"):
        if not np.isin(pred, est.classes_).all():
            problems.append("predict gives labels outside classes_")
    elif task == "oneclass":
        if not np.isin(pred, (-1, 1)).all():
            problems.append("predict gives labels other than ±1")
    elif not np.isfinite(pred.astype(float)).all():
        problems.append("predict gives non-finite values")
    for method in ("decision_function", "predict_proba"):
        if hasattr(est, method) and (method != "predict_proba" or getattr(est, "probability", True)):
            try:
                values = np.asarray(getattr(est, method)(Xp), dtype=float)
            except AttributeError:
                continue
            if not np.isfinite(values).all():
                problems.append(f"{method} gives non-finite values")
    if "constant_X" in spec["faults"] and m and np.unique(pred).size > 1:
        problems.append("different predictions for identical rows")
    return problems, pred


def run_estimator(case):
    import numpy as np

    what, params, spec = case["what"], case["params"], case["data"]
    faults = spec["faults"]
    words = "|".join(w for f in faults if (w := DATA_FAULTS[f])) or None
    names = list(params) + list(make_estimator(what, {}).get_params(deep=False))  # an error may name any
    names += [k for k, _ in params.get("param_grid") or [] if isinstance(k, str)] if isinstance(
        params.get("param_grid"), list) else []
    X, y, Xp = make_data(spec)
    if params.get("kernel") == "precomputed" and isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind == "f":
        with np.errstate(all="ignore"):
            X, Xp = X @ X.T, (np.asarray(Xp, dtype=float) @ X.T if np.asarray(Xp).ndim == 2 else Xp)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est = make_estimator(what, params)
            est.fit(X, y) if spec["task"] != "oneclass" else est.fit(X)
            problems, pred = _check_output(what, est, X, y, Xp, spec)
        except Exception as exc:  # the outcome under test
            return {"outcome": classify_error(exc, names, words), "error": f"{type(exc).__name__}: {exc}"[:400]}
    own = [f"{w.category.__name__}: {w.message}" for w in caught
           if not NUMPY_WARNINGS.search(str(w.message)) and not issubclass(w.category, DeprecationWarning)]
    problems += [f"numpy warning: {m}" for m in numpy_warnings(caught)] if not own else []
    y_unused = what == "LibsvmScaler" or spec["task"] == "oneclass"
    refused = set(faults) & REFUSED_DATA - ({"y_nan", "y_inf", "y_short", "y_mixed"} if y_unused else set())
    if str(params.get("kernel", "")).startswith("callable:"):
        refused -= TEXT_FAULTS  # the kernel's to read
    if "y_str" in faults:
        refused -= {"y_nan", "y_inf"}  # labels 'cnan' and 'cinf' are strings like the others
    if "X_bool" in faults:
        refused -= {"nan", "inf", "predict_nan"}  # x > 0 of NaN and inf is False and True
    refused = sorted(refused)
    refused += _invalid_params(what, params)
    if refused:
        problems.append(f"accepted {', '.join(refused)}")
    if not problems and pred is not None and not faults:
        problems += _oracle(what, params, X, y, pred, est)
    if not problems and pred is not None and any(f.startswith("scale:") for f in faults) and not own:
        problems += _unscaled_oracle(case, pred)
    if problems:
        return {"outcome": "silent_wrong", "error": "; ".join(problems)[:400], "warnings": own[:3]}
    return {"outcome": "correct", "warnings": own[:3]}


def _unscaled_oracle(case, pred):
    """An RBF kernel with gamma='scale' does not change when X is scaled: the fit on X and on
    s·X must agree (unless the library warned that it could not resolve gamma)."""
    import numpy as np

    params = case["params"]
    if case["what"] not in ("SVC", "NuSVC", "OneClassSVM") or params.get("kernel", "rbf") != "rbf" or \
            params.get("gamma", "scale") != "scale" or set(params) - {"C", "nu", "tol", "cache_size"}:
        return []
    spec = {**case["data"], "faults": [f for f in case["data"]["faults"] if not f.startswith("scale:")]}
    X, y, Xp = make_data(spec)
    est = make_estimator(case["what"], params)
    est.fit(X, y) if spec["task"] != "oneclass" else est.fit(X)
    agree = np.mean(est.predict(Xp) == pred)
    return [] if agree >= 0.9 else [f"predictions agree with the unscaled fit's on {agree:.0%} of rows"]


# --------------------------------------------------------------------------- the worker: files

_MODELS = {}


def _base_model(name):
    """A small fitted model of each kind, and the data it predicts (made once per worker)."""
    if name not in _MODELS:
        import numpy as np

        import svmkit
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(str(DATA / "heart_scale"))
        X, y = X[:40], y[:40]
        three = np.where(np.arange(40) % 3 == 0, 2.0, y)
        est = {"svc": lambda: svmkit.SVC().fit(X, y),
               "svc_prob": lambda: svmkit.SVC(probability=True, random_state=0).fit(X, y),
               "nusvc3": lambda: svmkit.NuSVC(nu=0.3).fit(X, three),
               "svr": lambda: svmkit.SVR().fit(X, y),
               "oneclass": lambda: svmkit.OneClassSVM().fit(X),
               "precomputed": lambda: svmkit.SVC(kernel="precomputed").fit((X @ X.T).toarray(), y),
               "linear_svc": lambda: svmkit.LinearSVC(random_state=0).fit(X, three),
               "linear_svr": lambda: svmkit.LinearSVR(random_state=0).fit(X, y)}[name]()
        Xp = (X @ X.T).toarray() if name == "precomputed" else X
        _MODELS[name] = est, Xp
    return _MODELS[name]


def damage_bytes(blob: bytes, damage, lines=True) -> bytes:
    """Apply truncations, byte flips and edits of one whitespace-separated field of a line."""
    for step in damage:
        how = step[0]
        if how == "truncate":
            blob = blob[: int(step[1] * len(blob))]
        elif how == "flip" and blob:
            pos = min(int(step[1] * len(blob)), len(blob) - 1)
            blob = blob[:pos] + bytes([blob[pos] ^ step[2]]) + blob[pos + 1:]
        elif how in ("field", "line") and lines:
            rows = blob.split(b"\n")
            i = min(int(step[1] * len(rows)), len(rows) - 1)
            if how == "line":
                rows[i:i + 1] = {"delete": [], "duplicate": [rows[i]] * 2, "blank": [b"", rows[i]]}[step[2]]
            else:
                fields = rows[i].split(b" ")
                fields[min(step[2], len(fields) - 1)] = step[3].encode("latin-1")
                rows[i] = b" ".join(fields)
            blob = b"\n".join(rows)
    return blob


def _damage_native_array(path, which, how):
    import numpy as np

    from svmkit.io.native import MAGIC

    blob = path.read_bytes()
    start = len(MAGIC) + 8 + int.from_bytes(blob[len(MAGIC):len(MAGIC) + 8], "little")
    with np.load(io.BytesIO(blob[start:])) as archive:
        state = {k: archive[k] for k in archive.files}
    name = sorted(state)[which % len(state)]
    a = state[name]
    changed = {"nan": lambda: np.full_like(a, np.nan) if a.dtype.kind == "f" else a.astype(float) * np.nan,
               "inf": lambda: a.astype(float) + np.inf, "shorter": lambda: a.ravel()[1:],
               "longer": lambda: np.concatenate([a.ravel(), a.ravel()[:1]]), "negative": lambda: -a - 1,
               "huge": lambda: np.full_like(a, np.iinfo(a.dtype).max) if a.dtype.kind in "iu" else a * 1e308,
               "float": lambda: a.astype(float) + 0.5, "2d": lambda: a.reshape(1, 1, -1),
               "drop": lambda: None, "empty": lambda: a.ravel()[:0]}[how]()
    if changed is None:
        del state[name]
    else:
        state[name] = changed
    buf = io.BytesIO()
    np.savez_compressed(buf, **state)
    path.write_bytes(blob[:start] + buf.getvalue())
    return name, a.dtype.kind in "iu", a.size


#: Damage to an array prediction reads that no reader may accept: a value that is not finite, or
#: an array of the wrong size, rank or presence. (A finite float edited to another finite float
#: cannot be told from a real model; an integer array, indices and counts, can be checked.)
STRUCTURAL = ("nan", "inf", "shorter", "longer", "2d", "empty")
PREDICTION_ARRAYS = ("support_", "support_vectors_", "_dual_coef_", "_intercept_", "n_features_in_", "shape_fit_",
                     "classes_", "n_support_", "gamma_", "probA_", "probB_", "offset_", "prob_density_marks_")


def run_file(case, tmp):
    import numpy as np
    import scipy.sparse as sp

    import svmkit
    from svmkit.io.liblinear_model import load_liblinear_model, save_liblinear_model
    from svmkit.io.libsvm_model import load_libsvm_model, save_libsvm_model

    kind, damage = case["what"], case["damage"]
    if kind == "data":
        good = b"".join((DATA / "heart_scale").read_bytes().splitlines(keepends=True)[:25])
        raw = damage_bytes(good, damage)
        suffix = {"gz": ".gz", "bz2": ".bz2"}.get(case["compress"], "")
        blob = {"gz": gzip.compress, "bz2": bz2.compress}.get(case["compress"], lambda b: b)(raw)
        if case["compress"] and any(d[0] in ("truncate", "flip") for d in damage):  # damage the stream too
            blob, raw = damage_bytes(blob, [d for d in damage if d[0] in ("truncate", "flip")], lines=False), None
        path = Path(tmp) / f"data{suffix}"
        path.write_bytes(blob)
        options = case["options"]
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            try:
                X, y = svmkit.load_svmlight(path, **options)
            except Exception as exc:  # the outcome under test
                name = "n_features" if "n_features" in options else "zero_based"
                outcome = classify_error(exc, [str(path), name], re.escape(str(path)))
                return {"outcome": outcome, "error": f"{type(exc).__name__}: {exc}"[:400]}
        problems = []
        Xd = X.toarray() if sp.issparse(X) else X
        if Xd.shape[0] != y.shape[0]:
            problems.append("X and y differ in rows")
        if raw is not None:
            from sklearn.datasets import load_svmlight_file
            try:
                Xs, ys = load_svmlight_file(io.BytesIO(raw), **{k: v for k, v in options.items() if k != "dense"})
            except Exception:  # the oracle refuses files LIBSVM accepts (e.g. 'nan' labels)
                Xs = None
            if Xs is not None and (Xs.shape != Xd.shape or not np.allclose(Xs.toarray(), Xd, equal_nan=True)
                                   or not np.allclose(ys, y, equal_nan=True)):
                problems.append("data differ from scikit-learn's reader")
        return {"outcome": "silent_wrong", "error": "; ".join(problems)} if problems else {"outcome": "correct"}
    est, Xp = _base_model(case["model"])
    path = Path(tmp) / "model"
    header_end = None
    if kind == "native":
        from svmkit.io.native import MAGIC

        svmkit.save(est, path)
        blob = path.read_bytes()
        header_end = len(MAGIC) + 8 + int.from_bytes(blob[len(MAGIC):len(MAGIC) + 8], "little")
    else:
        (save_libsvm_model if kind == "libsvm" else save_liblinear_model)(est, path)
    if damage[0][0] == "array":
        edited, edited_int, edited_size = _damage_native_array(path, damage[0][1], damage[0][2])
        damage_note = f"array {edited} ({damage[0][2]})"
    else:
        path.write_bytes(damage_bytes(path.read_bytes(), damage, lines=kind != "native"))
        damage_note = None
    load = {"native": svmkit.load, "libsvm": load_libsvm_model, "liblinear": load_liblinear_model}[kind]
    def decision(model):
        return np.asarray(model.decision_function(Xp) if hasattr(model, "decision_function") else model.predict(Xp),
                          dtype=float)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            back = load(path)
        except Exception as exc:  # the outcome under test: an error naming the file
            outcome = classify_error(exc, [str(path)])
            if outcome == "clear" and not str(exc).startswith(str(path)):
                outcome = "unclear"
            return {"outcome": outcome, "error": f"{damage_note or ''} {type(exc).__name__}: {exc}"[:400]}
        try:
            pred = np.asarray(back.predict(Xp))
            values = decision(back)
        except Exception as exc:  # the outcome under test: the loaded model refuses data it cannot take
            return {"outcome": classify_error(exc, ["X", "features"]),
                    "error": f"{damage_note or ''} at predict: {type(exc).__name__}: {exc}"[:400]}
    problems = [f"numpy warning: {m}" for m in numpy_warnings(caught)]
    if pred.shape != (Xp.shape[0],) or not np.isfinite(values).all():
        problems.append("the loaded model predicts non-finite values or the wrong shape")
    if hasattr(back, "classes_") and case["model"] not in ("oneclass",) and not np.isin(pred, back.classes_).all():
        problems.append("labels outside classes_")
    flips_in_arrays = kind == "native" and damage_note is None and all(
        d[0] == "flip" and int(d[1] * len(blob)) >= header_end for d in damage)
    if flips_in_arrays and not np.allclose(values, decision(est)):
        problems.append("a byte flip in the checksummed arrays changed the predictions")
    if damage_note and edited_size and edited.split(".")[0] in PREDICTION_ARRAYS and (damage[0][2] in STRUCTURAL or damage[0][2] in ("negative", "huge", "float")
                                        and edited_int):
        problems.append(f"loaded a file with a damaged {damage_note}")
    if problems:
        return {"outcome": "silent_wrong", "error": f"{damage_note or ''} " + "; ".join(problems)}
    return {"outcome": "correct"}


# --------------------------------------------------------------------------- the worker: command line


def _cli_files(tmp):
    """The files the command-line cases name, made once per worker."""
    import svmkit
    from svmkit.io.libsvm_model import save_libsvm_model
    from svmkit.io.liblinear_model import save_liblinear_model

    tmp = Path(tmp)
    lines = (DATA / "heart_scale").read_bytes().splitlines(keepends=True)
    files = {"data": tmp / "data", "tiny": tmp / "tiny", "bad_data": tmp / "bad_data", "empty": tmp / "empty",
             "model": tmp / "model", "native": tmp / "model.svmkit", "prob_model": tmp / "prob.model",
             "bad_model": tmp / "bad.model", "linear_model": tmp / "linear.model", "range": tmp / "range",
             "data_gz": tmp / "data.gz", "missing": tmp / "missing", "dir": tmp / "dir",
             "nodir": tmp / "no" / "such" / "dir"}
    files["data"].write_bytes(b"".join(lines[:60]))
    files["tiny"].write_bytes(b"".join(lines[:24]))
    files["bad_data"].write_bytes(b"".join(lines[:5]) + b"+1 1:0.5 1:0.7\n")
    files["empty"].write_bytes(b"")
    files["data_gz"].write_bytes(gzip.compress(b"".join(lines[:60]))[:-30])
    files["dir"].mkdir(exist_ok=True)
    est, _ = _base_model("svc")
    save_libsvm_model(est, files["model"])
    svmkit.save(est, files["native"])
    save_libsvm_model(_base_model("svc_prob")[0], files["prob_model"])
    save_liblinear_model(_base_model("linear_svc")[0], files["linear_model"])
    files["bad_model"].write_bytes(files["model"].read_bytes().replace(b"rho ", b"rho nan ", 1))
    files["range"].write_text("x\n-1 1\n1 0 1\n2 -1 1\n")
    return files


def run_cli(case, tmp, files):
    from svmkit.cli.main import main

    mapping = {k: str(v) for k, v in files.items()}
    mapping.update(out=str(Path(tmp) / "out"), outdir=str(Path(tmp) / "easy_out"))
    argv = [re.sub(r"\{(\w+)\}", lambda m: mapping[m.group(1)], a) for a in case["argv"]]
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            status = main(argv)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        except Exception:  # the outcome under test: a traceback instead of a one-line error
            return {"outcome": "unclear", "error": traceback.format_exc()[-400:]}
    stderr = err.getvalue().strip()
    message = stderr.splitlines()[-1] if stderr else ""
    if status == 0:
        problems = [f"numpy warning: {m}" for m in numpy_warnings(caught)]
        bad = _bad_cli_values(case["argv"])
        if bad:
            problems.append(f"accepted {', '.join(bad)}")
        return {"outcome": "silent_wrong", "error": "; ".join(problems)} if problems else {"outcome": "correct"}
    if status != 1 or "Traceback" in stderr or not re.match(r"svmkit( \w+)?: error: ", message) or \
            UNCLEAR_MESSAGES.search(message):
        return {"outcome": "unclear", "error": f"exit {status}: {stderr[-400:]}"}
    return {"outcome": "clear", "error": message[:400]}


def _bad_cli_values(argv):
    """Options of `argv` no command may accept: a NaN anywhere; a cost, gamma, nu, epsilon or
    tolerance out of range."""
    bad = []
    for flag, value in zip(argv, argv[1:]):
        if not flag.startswith("-") or flag in ("-log2c", "-log2g", "-log2p"):
            continue
        try:
            number = float(value)
        except ValueError:
            continue
        if math.isnan(number) or (flag in ("-c", "-g", "-p", "-e", "-m") and number < 0) or \
                (flag == "-n" and not 0 < number <= 1) or (flag == "-c" and number == 0):
            bad.append(f"{flag} {value}")
    return bad


# --------------------------------------------------------------------------- worker and runner


def run_probe(case):
    """The runner's own test cases: return at once, sleep past any limit, or abort the process."""
    if case["what"] == "sleep":
        time.sleep(3600)
    elif case["what"] == "abort":
        os.abort()
    return {"outcome": "correct"}


def _worker():
    """Run the cases on stdin (one JSON per line), reporting `start i` and `done i {...}`."""
    import resource

    limit = 6 << 30  # a huge allocation is a MemoryError here, not the machine's swap
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.environ.setdefault("MPLBACKEND", "Agg")
    # the protocol's own descriptor: what the library or C code prints goes to /dev/null
    stdout = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)

    import svmkit
    svmkit.SVC().fit([[0.0], [1.0]], [0, 1])  # the compiled loops loaded before the first clock
    print("ready", file=stdout, flush=True)
    files = None
    with tempfile.TemporaryDirectory() as tmp:
        for number, line in enumerate(sys.stdin):
            case = json.loads(line)
            print(f"start {number}", file=stdout, flush=True)
            with tempfile.TemporaryDirectory(dir=tmp) as case_tmp:
                try:
                    if case["target"] == "probe":
                        result = run_probe(case)
                    elif case["target"] == "estimator":
                        result = run_estimator(case)
                    elif case["target"] == "file":
                        result = run_file(case, case_tmp)
                    else:
                        files = files or _cli_files(Path(tmp))
                        result = run_cli(case, case_tmp, files)
                except MemoryError as exc:
                    result = {"outcome": "crash", "error": f"MemoryError: {exc}"}
                except Exception:  # the harness's own failure, reported as such
                    result = {"outcome": "unclear", "error": "harness: " + traceback.format_exc()[-400:]}
            print(f"done {number} {json.dumps(result)}", file=stdout, flush=True)


def _start_worker(cases):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "PYTHONWARNINGS": "ignore",
           "MPLBACKEND": "Agg"}
    proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    lines = queue.Queue()

    def feed():
        try:
            for case in cases:
                proc.stdin.write(json.dumps(case) + "\n")
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def read():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)
    threading.Thread(target=feed, daemon=True).start()
    threading.Thread(target=read, daemon=True).start()
    return proc, lines


def _run_batch(cases, time_limit, startup_limit=120.0):
    """Outcomes of `cases` in one worker, restarted after a hang or a crash; each of those is
    tried once more alone in a fresh worker before it counts."""
    results = [None] * len(cases)
    todo = list(range(len(cases)))
    suspects = []
    while todo:
        proc, lines = _start_worker([cases[i] for i in todo])
        deadline, current = time.monotonic() + startup_limit, None
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                proc.kill()
                proc.wait()
                if current is not None:
                    suspects.append((todo[current], {"outcome": "hang", "error": f"no answer in {time_limit} s"}))
                break
            if line is None:
                proc.wait()
                if current is not None:
                    suspects.append((todo[current], {"outcome": "crash",
                                                     "error": f"worker ended with status {proc.returncode}"}))
                break
            word, *rest = line.split(" ", 2)
            if word == "ready":
                deadline = time.monotonic() + time_limit
            elif word == "start":
                current, deadline = int(rest[0]), time.monotonic() + time_limit
            elif word == "done":
                results[todo[int(rest[0])]] = json.loads(rest[1])
                current = None
        bad = {s for s, _ in suspects}
        left = [i for i in todo if results[i] is None and i not in bad]
        if len(left) == len(todo):  # the worker died before its first case
            for i in left:
                results[i] = {"outcome": "crash", "error": f"worker did not start (status {proc.returncode})"}
            left = []
        todo = left
    for index, first in suspects:
        if len(cases) == 1:
            results[index] = first
            continue
        again = _run_batch([cases[index]], time_limit, startup_limit)[0]
        results[index] = again if again["outcome"] in ("hang", "crash") else {**again, "note": "alone"}
    return results


def run_cases(cases, time_limit=20.0, jobs=2, batch=60):
    """Outcomes of every case, in order, running `jobs` workers at once on batches of `batch`."""
    from concurrent.futures import ThreadPoolExecutor

    chunks = [cases[i:i + batch] for i in range(0, len(cases), batch)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        parts = list(pool.map(lambda chunk: _run_batch(chunk, time_limit), chunks))
    return [r for part in parts for r in part]


def totals(results):
    counts = dict.fromkeys(OUTCOMES, 0)
    for r in results:
        counts[r["outcome"]] += 1
    return counts


def describe(case):
    """One line naming a case: what it ran, with which parameters, data faults or damage."""
    if case["target"] == "estimator":
        data = case["data"]
        return f"{case['what']}({json.dumps(case['params'])}) data={data['task']}:{data['faults']} seed={data['seed']}"
    if case["target"] == "file":
        extra = {k: case[k] for k in ("model", "compress", "options") if k in case}
        return f"{case['what']} file {json.dumps(extra)} damage={json.dumps(case['damage'])}"
    return "svmkit " + " ".join(case["argv"])


def report(cases, results):
    """Lines for each case whose outcome is not clean."""
    return [f"[{r['outcome']}] {describe(c)} -> {r.get('error', '')}"
            for c, r in zip(cases, results) if r["outcome"] not in CLEAN]


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _worker()
