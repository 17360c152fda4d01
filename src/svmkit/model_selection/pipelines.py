"""A search over a scikit-learn Pipeline whose last step is an svmkit model. On each fold the
steps before the model are fitted on the fold's training rows and transform its training and
test rows, as the Pipeline's own fit and predict do in GridSearchCV; the model's cells are
then fitted on those rows as on a bare model's fold (`paths.fit_group`: one kernel for the
cells along C, each warm-started from the previous; `cells.fit_cells` for the other models).
Cells that set parameters of the earlier steps (`scaler__with_mean`) get their own
transformed folds, one set per setting."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing

from svmkit._arrays import stack_rows
from svmkit.model_selection.cells import fit_cells
from svmkit.model_selection.paths import CellFit, Scoring, fit_group
from svmkit.models.smo.base import SMOModel


def last_step(estimator):
    """(the model, its step's name) of a Pipeline; (estimator, None) for anything else."""
    if isinstance(estimator, Pipeline):
        name, model = estimator.steps[-1]
        return model, name
    return estimator, None


@dataclass
class Settings:
    """A grid's cells split into the parameters of the steps before the model and the model's
    own: cell i sets `preps[setting[i]]` on the steps and `model_params[i]` (without the step's
    `name__` prefix) on the model. A bare model's cells are one setting."""

    preps: list[dict]
    setting: list[int]
    model_params: list[dict]

    def cells(self, k: int) -> tuple[list[int], list[dict]]:
        """The grid indices of the cells of setting k and their model parameters."""
        index = [i for i, s in enumerate(self.setting) if s == k]
        return index, [self.model_params[i] for i in index]


def split_cells(cells: list[dict], name: str | None) -> Settings:
    """The cells' `Settings`, for a Pipeline whose model step is `name` (None: a bare model)."""
    if name is None:
        return Settings([{}], [0] * len(cells), list(cells))
    prefix = f"{name}__"
    keys: dict = {}
    preps, setting, model_params = [], [], []
    for cell in cells:
        prep = {k: v for k, v in cell.items() if not k.startswith(prefix)}
        for k in prep:
            if k in (name, "steps"):
                raise ValueError(f"param_grid names {k!r}, which replaces the searched model: SVMSearchCV searches one "
                                 "svmkit model's parameters; scikit-learn's GridSearchCV searches over estimators")
        key = repr(sorted((k, repr(v)) for k, v in prep.items()))
        if key not in keys:
            keys[key] = len(preps)
            preps.append(prep)
        setting.append(keys[key])
        model_params.append({k[len(prefix):]: v for k, v in cell.items() if k.startswith(prefix)})
    return Settings(preps, setting, model_params)


@dataclass
class TransformedFolds:
    """Each fold's rows through the steps before the model: `Z[setting, fold]` holds the fold's
    training rows then its test rows; `y` and `sample_weight` are the search's (all rows)."""

    Z: dict
    y: np.ndarray
    sample_weight: np.ndarray | None


def transform_folds(pipeline, X, y, sample_weight, folds, preps) -> TransformedFolds:
    """The `TransformedFolds` of `pipeline` on (X, y) for each setting of `preps`: the steps before
    the model fitted on each fold's training rows of (X, y)."""
    Z = {}
    for k, prep in enumerate(preps):
        steps = clone(pipeline).set_params(**prep)[:-1]
        for fold, (train, test) in enumerate(folds):
            X_train, X_test = _safe_indexing(X, train), _safe_indexing(X, test)
            if len(steps):
                fitted = clone(steps)
                X_train = fitted.fit_transform(X_train, y[train])
                X_test = fitted.transform(X_test)
            Z[k, fold] = stack_rows(X_train, X_test)
    return TransformedFolds(Z, y, sample_weight)


def fit_transformed(model, data: TransformedFolds, setting, paths, folds, scoring: Scoring, memory_mb) -> list[CellFit]:
    """`paths.fit_group` (or `cells.fit_cells`) of `model`'s cells `paths`, of one setting of the
    earlier steps, on each of `folds` ((fold id, train, test) triples) of `data`."""
    fit = fit_group if isinstance(model, SMOModel) else fit_cells
    out = []
    for fold, train, test in folds:
        rows = np.concatenate([train, test])
        index = np.arange(rows.size)
        sw = None if data.sample_weight is None else data.sample_weight[rows]
        out += fit(model, data.Z[setting, fold], data.y[rows], sw, paths, [(fold, index[: train.size],
                                                                            index[train.size:])], scoring, memory_mb)
    return out


def refit_pipeline(pipeline, prep, X, y, fit_model):
    """`pipeline` with `prep` set on its steps before the model, those fitted on (X, y), and its
    model `fit_model(Z)`, Z being X through them."""
    pipe = clone(pipeline).set_params(**prep)
    before = pipe[:-1]
    Z = before.fit_transform(X, y) if len(before) else X
    # the fitted steps are the slice's: a Pipeline with `memory` fits clones of its steps
    pipe.steps = [*before.steps, (pipe.steps[-1][0], fit_model(Z))]
    return pipe
