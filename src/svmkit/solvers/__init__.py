"""Layer 2, the solvers by family: `smo` (the dual QP solver, its row sources, compiled loops,
starting points, feasibility LP and the cascade), `liblinear` (dual coordinate descent and the
Newton methods of the linear SVMs) and `dense` (factorisations and conjugate gradient, Nyström,
kernel logistic regression's Newton). They see arrays and kernels, never a model; import kernels
and the shared helpers. `svmkit.backend`, beside them in layer 2, chooses between the host and
the GPU."""
