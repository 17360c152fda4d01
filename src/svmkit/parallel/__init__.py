"""Layer 0: the execution layer — tasks on threads, processes or a Dask cluster (`tasks`),
everything Dask (`dask`), work block of rows by block on Dask collections (`blocks`), and
Ctrl-C for compiled loops in the main thread (`interrupt`); imports only the other layer-0
helpers."""

from svmkit.parallel.blocks import predict

__all__ = ["predict"]
