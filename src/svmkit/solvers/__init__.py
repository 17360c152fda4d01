"""Layer 2: the dual QP solver, its row sources and the feasibility LP; they see arrays and
kernels, never a model; imports kernels and the shared helpers."""
