"""Layer 4: work past one process — model selection's tasks on a Dask cluster, and prediction
block by block on Dask arrays and dataframes; imports models and the layers below."""

from svmkit.parallel.blocks import predict

__all__ = ["predict"]
