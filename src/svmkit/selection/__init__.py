"""Layer 4: model selection — parameter grids, cross-validation folds, the warm-started paths
that fit every cell of one kernel, and the search; imports models and the layers below."""
