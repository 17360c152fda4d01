"""Scratch memory kept between fits: the kernel-row store and the solver's work buffers.

On a virtual machine the first write to a fresh page costs more than the arithmetic that
fills it (NumPy's huge-page requests most of all), and model selection is thousands of fits.
Buffers handed back are kept, up to `KEEP_BYTES` in all, for the next request of the same
process.
"""

from __future__ import annotations

import threading

import numpy as np

#: Most bytes of freed buffers kept for reuse.
KEEP_BYTES = 256 * 2**20

_kept: list[np.ndarray] = []
#: Buffers handed back and not yet kept: `give` runs from finalizers too, which the garbage
#: collector may call in the very thread that holds `_lock` inside `take`.
_returned: list[np.ndarray] = []
_lock = threading.Lock()


def take(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, on reused memory when a kept buffer is large enough."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    with _lock:
        _keep_returned()
        fits = [k for k, b in enumerate(_kept) if b.nbytes >= nbytes]
        if fits:
            buf = _kept.pop(min(fits, key=lambda k: _kept[k].nbytes))
        else:
            _kept.clear()  # a larger fit is coming: keep its buffers instead, not both
            buf = None
    if buf is None:
        buf = np.empty(max(nbytes, 1), dtype=np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def give(arr: np.ndarray) -> None:
    """Hand back an array from `take` (or any view of it); it must not be used afterwards."""
    base = arr
    while base.base is not None:
        base = base.base
    if not isinstance(base, np.ndarray) or base.dtype != np.uint8 or base.nbytes > KEEP_BYTES:
        return
    _returned.append(base)
    if _lock.acquire(blocking=False):  # else the holder's next `take` keeps it
        try:
            _keep_returned()
        finally:
            _lock.release()


def _keep_returned():
    """The returned buffers into `_kept`, largest first, within KEEP_BYTES; under `_lock`."""
    while _returned:
        _kept.append(_returned.pop())
    _kept.sort(key=lambda b: b.nbytes, reverse=True)
    while sum(b.nbytes for b in _kept) > KEEP_BYTES:
        _kept.pop(0)
