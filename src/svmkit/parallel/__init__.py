"""Layer 0: the execution layer — tasks on threads, processes or a Dask cluster (`tasks`),
everything Dask (`dask`), work block of rows by block on Dask collections (`blocks`) and the
clusters (`cluster`); imports only the other layer-0 helpers."""

from svmkit.parallel.blocks import predict

__all__ = ["predict"]
