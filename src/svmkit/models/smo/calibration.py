"""The probabilities of the SMO models, fitted on the training kernel's rows so that no kernel
value is computed twice (LIBSVM 3.37's, by the same folds):

- `pairs`: Platt's sigmoid per class pair (Platt 1999; Lin, Lin & Weng 2007) on the decision
  values of a 5-fold cross-validation within the pair (svm_binary_svc_probability);
- `tube`: the Laplace noise scale σ of regression from 5-fold cross-validated residuals
  (svm_svr_probability);
- `density`: one-class SVM's density marks of the training decision values (LIBSVM 3.30).

Each takes the formulation, the fit's `DualSolver`, the rows' places in the solver's rows, the
targets and weights, the folds' seed and the fitted state, and returns the attributes it fits.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from svmkit.exceptions import warn
from svmkit.models.smo.formulations import class_pairs, positive_rows
from svmkit.models.smo.probability import N_MARKS, density_marks, fit_sigmoid, laplace_scale
from svmkit.parallel.tasks import run_tasks
from svmkit.solvers.smo.row_source import row_products
from svmkit.solvers.smo.solver import solved_whole
from svmkit.solvers.smo.solver import batch_decisions, fit_sigmoids

#: Folds of the internal cross-validation (LIBSVM's 5).
PROBABILITY_FOLDS = 5
#: The noise model's description as LIBSVM prints it, up to σ's value.
LAPLACE_MODEL = ("Prob. model for test data: target value = predicted value + z,\nz: Laplace distribution "
                 "e^(-|z|/sigma)/(2sigma),sigma=")


def probability_folds(n: int, seed: int) -> np.ndarray:
    """The fold (0 … PROBABILITY_FOLDS − 1) of each of n rows, as LIBSVM deals them: the rows
    shuffled by `seed`, then cut into PROBABILITY_FOLDS runs of ⌊i·n/5⌋ boundaries."""
    fold = np.empty(n, dtype=np.int64)
    fold[np.random.default_rng(seed).permutation(n)] = np.arange(n) * PROBABILITY_FOLDS // max(n, 1)
    return fold


def may_share_threads(rows, verbose=False) -> bool:
    """Whether solves on `rows` may run on several threads at once: the rows can be fetched
    concurrently and no summary is printed (lines from several solves would interleave)."""
    return bool(getattr(rows, "concurrent", False)) and not verbose and (os.cpu_count() or 1) > 1


def each_task(rows, work, tasks, verbose=False) -> list:
    """[work(t) for t in tasks], on threads when `may_share_threads` (the compiled loops
    release the GIL), else in turn."""
    return run_tasks(work, [(t,) for t in tasks], n_jobs=None if may_share_threads(rows, verbose) else 1,
                     limit_threads=True)


def fetch_fold_rows(rows, row_index):
    """Compute every training row at once, on every core, when the calibration folds' duals
    are solved whole: each then fetches all its rows first, and together they need every one,
    which the first fold would otherwise compute alone while the other tasks wait on the row
    source."""
    every = np.unique(row_index)
    n_fold = every.size - every.size // PROBABILITY_FOLDS
    if solved_whole(n_fold, n_fold, rows.capacity):
        rows.fetch(every)


def pairs(form, solver, row_index, y_enc, weight, seed, state=None) -> dict:
    """Platt's (A, B) per class pair (`probA_`, `probB_`), fitted on the decision values of a
    5-fold cross-validation within the pair, each pair's rows dealt into its own folds as
    LIBSVM deals them."""
    at_once = _pairs_at_once(form, solver, row_index, y_enc, weight, seed)
    if at_once is not None:
        return at_once
    quiet = replace(solver, verbose=False)
    n_classes = form.fitted["classes_"].shape[0]
    posed = [form.pair_rows(y_enc, weight, a, b) for a, b in class_pairs(n_classes)]
    folds = [probability_folds(idx.size, seed + k) for k, (idx, _) in enumerate(posed)]

    def fold_decisions(task):
        k, f = task
        idx, ypair = posed[k]
        return _fold_decisions(form, quiet, row_index[idx], ypair, weight[idx], folds[k] == f, k)

    tasks = [(k, f) for k in range(len(posed)) for f in range(PROBABILITY_FOLDS)]
    decisions = each_task(solver.rows, fold_decisions, tasks, solver.verbose)
    params = []
    for k, (idx, ypair) in enumerate(posed):
        dec = np.empty(idx.size)
        for (task_pair, f), values in zip(tasks, decisions):
            if task_pair == k:
                dec[folds[k] == f] = values
        params.append(fit_sigmoid(dec, ypair))
    probA, probB = (np.array(v) for v in zip(*params))
    return {"probA_": probA, "probB_": probB}


def _pairs_at_once(form, solver, row_index, y_enc, weight, seed) -> dict | None:
    """`pairs`' folds solved in one call and the sigmoids fitted together; None where they
    cannot be (the per-fold path then runs)."""
    layout = form.layout(y_enc, weight)
    if layout is None:
        return None
    idx, ypair, offsets = layout
    sizes = np.diff(offsets)
    fold = np.concatenate([probability_folds(n, seed + k) for k, n in enumerate(sizes)])
    pair = np.repeat(np.arange(sizes.size), sizes)
    # fold problem k·F + f: pair k's rows outside fold f, in the pair's order
    task = pair * PROBABILITY_FOLDS + fold
    train = np.concatenate([np.flatnonzero(fold != f) for f in range(PROBABILITY_FOLDS)])
    train_task = np.concatenate([task[fold != f] - fold[fold != f] + f for f in range(PROBABILITY_FOLDS)])
    by_task = np.argsort(train_task, kind="stable")
    train, train_task = train[by_task], train_task[by_task]
    n_tasks = sizes.size * PROBABILITY_FOLDS
    train_sizes = np.bincount(train_task, minlength=n_tasks)
    train_offsets = np.r_[0, np.cumsum(train_sizes)]
    positives = np.bincount(train_task, weights=ypair[train] > 0, minlength=n_tasks)
    if np.any((positives == 0) | (positives == train_sizes)):
        return None  # a training part of one class: the per-fold path gives its ±1
    batch = form.pair_batch(ypair[train], weight[idx[train]], row_index[idx[train]], train_offsets)
    solved = solver.solve_batch(form, batch)
    if solved is None:
        return None
    res, scale = solved
    test = np.argsort(task, kind="stable")
    test_offsets = np.r_[0, np.cumsum(np.bincount(task, minlength=n_tasks))]
    coef = scale[batch.owner()] * batch.problems.y * res.alpha
    dec = np.empty(idx.size)
    dec[test] = batch_decisions(solver.rows, batch, coef, row_index[idx[test]], test_offsets) - \
        np.repeat(scale * res.rho, np.diff(test_offsets))
    probA, probB = fit_sigmoids(dec, ypair, offsets).T.copy()
    return {"probA_": probA, "probB_": probB}


def _fold_decisions(form, solver, kidx, ypair, weight, test, k):
    """The decision values of the rows `test` of pair k from its dual solved on the others; a
    training part with one class only gives its ±1, as LIBSVM does."""
    train = ~test
    if not test.any():
        return np.empty(0)
    labels = np.unique(ypair[train])
    if labels.size < 2:
        return np.full(np.count_nonzero(test), labels[0] if labels.size else 0.0)
    try:
        posed = form.pair(solver.rows, kidx[train], ypair[train], weight[train], k)
        (fit,) = solver.solve(form, [(np.arange(np.count_nonzero(train)), posed)])
    except ValueError as err:
        raise ValueError(f"probability=True: a fold of the internal {PROBABILITY_FOLDS}-fold cross-validation of "
                         f"class pair {form.pair_label(k)} cannot be "
                         f"fitted: {err}") from None
    nz = fit.coef != 0
    return row_products(solver.rows, kidx[train][fit.rows[nz]], fit.coef[nz], kidx[test]) - fit.rho


def tube(form, solver, row_index, y, weight, seed, state=None) -> dict:
    """LIBSVM's Laplace noise model (`probA_`): σ from the residuals of a 5-fold
    cross-validation."""
    keep = positive_rows(weight)
    fold = probability_folds(keep.size, seed)
    if keep.size < 2:
        raise ValueError(f"probability=True needs at least 2 samples of positive weight for its internal "
                         f"{PROBABILITY_FOLDS}-fold cross-validation, got {keep.size}")

    def fold_predictions(f):
        test, train = keep[fold == f], keep[fold != f]
        if not test.size:
            return np.empty(0)
        try:
            (fit,) = solver.solve(form, form.problems(solver.rows, row_index[train], y[train], weight[train]))
        except ValueError as err:
            raise ValueError(f"probability=True: a fold of the internal {PROBABILITY_FOLDS}-fold "
                             f"cross-validation cannot be fitted: {err}") from None
        return row_products(solver.rows, row_index[train][fit.rows], fit.coef, row_index[test]) - fit.rho

    pred = np.empty(keep.size)
    for f, values in enumerate(each_task(solver.rows, fold_predictions, list(range(PROBABILITY_FOLDS)), solver.verbose)):
        pred[fold == f] = values
    probA = np.array([laplace_scale(y[keep] - pred)])
    if solver.verbose:
        print(f"{LAPLACE_MODEL} {probA[0]:g}")  # svm-train's spacing
    return {"probA_": probA}


def density(form, solver, row_index, target, weight, seed, state) -> dict:
    """LIBSVM's density marks (`prob_density_marks_`, Que & Lin) of the full fit's training
    decision values; none, with a warning, when one side of the boundary has too few."""
    # the training points the dual kept (positive weight), as LIBSVM's problem holds them
    kept = row_index[positive_rows(weight)]
    dec = row_products(solver.rows, row_index[state["support_"]], state["_dual_coef_"][0], kept) + \
        state["_intercept_"][0]
    marks = density_marks(dec)
    if marks is None:
        warn(f"probability=True: fewer than {N_MARKS // 2} training points on one side of the "
             "boundary; no density marks, so predict_proba is unavailable", UserWarning)
        return {}
    return {"prob_density_marks_": marks}


#: Each calibration by the name a formulation gives (`Formulation.calibration`).
CALIBRATIONS = {"pairs": pairs, "tube": tube, "density": density}
#: What a model without `probability` keeps of its calibration (scikit-learn's SVC: empty
#: probA_ and probB_).
WITHOUT = {"pairs": {"probA_": np.empty(0), "probB_": np.empty(0)}}
