"""Layer 2, the SMO family: the dual QP solver (LIBSVM's SMO with a working set of many
variables), its batch of small duals, starting points, the kernel-row source, the
hard-constraint feasibility tests, its CUDA kernels and the exact cascade over partitions."""
