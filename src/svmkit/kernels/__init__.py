"""Layer 1: kernel kinds (inner-product and distance kernels, a precomputed matrix, a callable),
Gram blocks on the host (dense, CSR, split sparse) and on a device, and the compiled element-wise
transforms; imports only the shared helpers of the package root and the execution layer."""
