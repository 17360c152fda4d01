"""Layer 1: kernel specifications, Gram blocks (dense, CSR, split sparse) and the compiled
element-wise transforms; imports only the shared helpers of the package root."""
