"""Which array library runs a fit: NumPy on the CPU, CuPy on an NVIDIA GPU (`device='cuda'`)."""

from __future__ import annotations

import numpy as np

DEVICES = ("cpu", "cuda")
#: How to install what `device='cuda'` needs.
GPU_EXTRA = ("pip install 'svmkit[gpu]' (CuPy for CUDA 12: the cupy-cuda12x wheel) or 'svmkit[gpu-cuda13]' "
             "(cupy-cuda13x)")


class DeviceUnavailableError(RuntimeError):
    """`device='cuda'` was asked for where CuPy or a CUDA device is missing."""


def array_module(device: str):
    """numpy for 'cpu'; cupy for 'cuda', or a DeviceUnavailableError that says what is missing."""
    if device == "cpu":
        return np
    try:
        import cupy
    except ImportError as err:
        raise DeviceUnavailableError(f"device='cuda' needs CuPy, which is not installed: {GPU_EXTRA}") from err
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # CUDARuntimeError when the driver is missing, not only an empty count
        raise DeviceUnavailableError(f"device='cuda' found no usable CUDA driver ({err}); use device='cpu'") from err
    if count == 0:
        raise DeviceUnavailableError("device='cuda' found no CUDA device; use device='cpu'")
    return cupy


def cuda_available() -> bool:
    """Whether device='cuda' can run here."""
    try:
        array_module("cuda")
    except DeviceUnavailableError:
        return False
    return True


def to_host(a):
    """A CuPy array (or CuPy sparse matrix) copied to the host; anything else unchanged."""
    if hasattr(a, "__cuda_array_interface__") or type(a).__module__.startswith("cupyx"):
        return a.get()
    return a
