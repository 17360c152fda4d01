"""`svmkit info model_file`: what a model file holds: type, kernel, classes, support vectors
(free and bounded when known), b and the dual objective when stored."""

from __future__ import annotations

import numpy as np

from svmkit.cli.common import read_model


def add_parser(sub):
    p = sub.add_parser("info", help="describe a model file (svmkit, LIBSVM or LIBLINEAR format)")
    p.add_argument("model_file")
    p.set_defaults(run=run)


def _kernel(est):
    params = {"poly": ("gamma", "degree", "coef0"), "rbf": ("gamma",), "sigmoid": ("gamma", "coef0")}
    values = {"gamma": est.gamma_, "degree": est.degree, "coef0": est.coef0}
    shown = ", ".join(f"{k}={values[k]:g}" for k in params.get(est.kernel, ()))
    return f"{est.kernel} ({shown})" if shown else est.kernel


def _describe_linear(est) -> list[str]:
    """A LIBLINEAR model: its loss, classes, ‖w‖ per class column and the intercepts."""
    W = np.atleast_2d(est.coef_)
    lines = [f"type: {type(est).__name__} (loss {est.loss})", "kernel: linear (primal weights)",
             f"features: {est.n_features_in_}"]
    if hasattr(est, "classes_"):
        lines.append("classes: " + " ".join(str(c) for c in np.asarray(est.classes_).tolist()))
    lines.append("|w|: " + " ".join(f"{v:.6g}" for v in np.linalg.norm(W, axis=1)))
    lines.append("b: " + " ".join(f"{v:.6g}" for v in np.ravel(est.intercept_)))
    return lines


def describe(est) -> list[str]:
    if hasattr(est, "steps"):  # a Pipeline: its steps in order, then its final model
        chain = " -> ".join(f"{name} ({type(step).__name__})" for name, step in est.steps)
        return [f"pipeline: {chain}"] + describe(est.steps[-1][1])
    if not hasattr(est, "kernel"):
        return _describe_linear(est)
    lines = [f"type: {type(est).__name__}", f"kernel: {_kernel(est)}", f"features: {est.n_features_in_}"]
    if hasattr(est, "classes_"):
        lines.append("classes: " + " ".join(str(c) for c in np.asarray(est.classes_).tolist()))
        lines.append("support vectors: " + f"{est.support_.size} (per class: "
                     + " ".join(str(int(n)) for n in est.n_support_) + ")")
    else:
        lines.append(f"support vectors: {est.support_.size}")
    if hasattr(est, "bounded_support_"):
        lines.append(f"free: {est.free_support_.size}, bounded: {est.bounded_support_.size}")
    else:
        lines.append("free / bounded: unknown (LIBSVM model files do not store C)")
    # b = −rho of each decision function, in LIBSVM's pair order and sign
    lines.append("b (= -rho): " + " ".join(f"{v:.6g}" for v in -np.ravel(est.libsvm_expansion()[1])))
    if hasattr(est, "objective_"):
        lines.append("objective: " + " ".join(f"{v:.6f}" for v in np.ravel(est.objective_)))
    return lines


def run(args) -> int:
    print("\n".join(describe(read_model(args.model_file))))
    return 0
