"""Layer 2: the dual QP solver, its row sources and compiled loops, dual coordinate descent,
factorisations and conjugate gradient, Nyström, kernel logistic regression's Newton and the
feasibility LP; they see arrays and kernels, never a model; imports kernels and the shared
helpers. `svmkit.backend`, beside it in layer 2, chooses between the host and the GPU."""
