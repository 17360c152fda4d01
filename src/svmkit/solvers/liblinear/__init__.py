"""Layer 2, the LIBLINEAR family: dual coordinate descent, Crammer and Singer's multi-class
solver, the L1-regularised Newton and the primal trust-region Newton method."""
