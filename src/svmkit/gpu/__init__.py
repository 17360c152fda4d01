"""The GPU backend (`device='cuda'`, CuPy): the array library a fit runs on, and kernel rows
computed on the device."""
