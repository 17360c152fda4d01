"""Cross-validation folds for a search, checked so that every training fold can be fitted."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold, check_cv

from svmkit._validation import check_label_types


def make_folds(cv, X, y, classifier: bool, random_state=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) row indices of each fold. An integer `cv` gives stratified folds for a
    classifier (KFold otherwise), shuffled with `random_state` when it is given, in order
    (as GridSearchCV's) when it is None; any scikit-learn splitter or iterable is used as is.

    A classifier's folds are checked: an integer `cv` must not exceed the smallest class, and
    every training fold must hold every class."""
    if classifier:
        check_label_types(y)
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 folds, got cv={cv}")
        if cv > len(y):
            raise ValueError(f"cv={cv} folds exceed the {len(y)} samples")
        shuffle = random_state is not None
        kind = StratifiedKFold if classifier else KFold
        cv = kind(int(cv), shuffle=shuffle, random_state=random_state if shuffle else None)
        if classifier:
            labels, counts = np.unique(y, return_counts=True)
            if counts.min() < cv.n_splits:
                raise ValueError(f"cv={cv.n_splits} folds exceed the smallest class: class {labels[counts.argmin()].tolist()!r} "
                                 f"has {counts.min()} samples")
    splitter = check_cv(cv, y, classifier=classifier)
    folds = [(np.asarray(tr, dtype=np.int64), np.asarray(te, dtype=np.int64)) for tr, te in splitter.split(X, y)]
    if len(folds) < 2:
        raise ValueError(f"cv gives {len(folds)} fold; a search needs at least 2")
    if classifier:
        labels = np.unique(y)
        for k, (train, _) in enumerate(folds):
            missing = np.setdiff1d(labels, y[train])
            if missing.size:
                raise ValueError(f"training fold {k} has no sample of class {missing[0].tolist()!r}; use stratified folds "
                                 "or fewer of them")
    return folds
