"""Layer 4: what a fitted model's predictions are made of — exact Shapley values of the kernel
models' decision values (`shapley_values`). Imports models and the layers below."""

from svmkit.inspection.shapley import ShapleyValues, shapley_values

__all__ = ["shapley_values", "ShapleyValues"]
