"""The CUDA source of the device solver compiles, without a GPU: NVRTC (NVIDIA's run-time
compiler, the one CuPy calls on the device) turns every variant into PTX for the oldest and the
newest architecture the GPU extra targets, so an error in the source shows on any machine."""

import ctypes
from pathlib import Path

import pytest

from svmkit.solvers.smo import _cuda as _smo_cuda
from svmkit.solvers.smo.solver import FULL_BLOCK

nvrtc_package = pytest.importorskip("nvidia.cuda_nvrtc", reason="NVRTC (nvidia-cuda-nvrtc-cu12) is not installed")

#: Virtual architectures compiled for: Volta, the oldest CuPy 13 builds for, and Hopper.
ARCHITECTURES = ("compute_70", "compute_90")


def nvrtc():
    folder = Path(list(nvrtc_package.__path__)[0]) / "lib"
    return ctypes.CDLL(str(sorted(folder.glob("libnvrtc.so*"))[0]))


def compile_to_ptx(source: str, options) -> tuple[int, str, bytes]:
    """(NVRTC's result code, its log, the PTX) of `source` compiled with `options`."""
    lib = nvrtc()
    program = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"svmkit.cu", 0, None, None) == 0
    try:
        encoded = [o.encode() for o in options]
        result = lib.nvrtcCompileProgram(program, len(encoded), (ctypes.c_char_p * len(encoded))(*encoded))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(program, log)
        ptx = b""
        if result == 0:
            lib.nvrtcGetPTXSize(program, ctypes.byref(size))
            buffer = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetPTX(program, buffer)
            ptx = buffer.value
        return result, log.value.decode(errors="replace"), ptx
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("per", _smo_cuda.per_variants(256))
def test_every_variant_of_the_device_solvers_kernels_compiles(per, architecture):
    """Blocks of 256 threads up to 1,024 take these variants (32 variables a thread down to 1)."""
    result, log, ptx = compile_to_ptx(_smo_cuda.source(per),
                                      [*_smo_cuda.NVRTC_OPTIONS, f"--gpu-architecture={architecture}"])
    assert result == 0, log
    for kernel in (b"smo_block", b"add_rows"):
        assert b".entry " + kernel in ptx


def test_an_error_in_the_source_is_reported_with_its_line():
    """The check can fail: a name that does not exist is a compile error naming it."""
    broken = _smo_cuda.source(1).replace("double best = inf", "double best = no_such_name")
    result, log, _ = compile_to_ptx(broken, _smo_cuda.NVRTC_OPTIONS)
    assert result != 0 and "no_such_name" in log


def test_the_variants_cover_the_largest_block_the_solver_makes():
    assert _smo_cuda.MOST_VARIABLES == FULL_BLOCK
    assert max(_smo_cuda.per_variants()) * _smo_cuda.BLOCK_THREADS == FULL_BLOCK
