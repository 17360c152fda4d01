"""Layer 2, the dense family: factorisations of K + sI (Cholesky, eigen, packed), their LAPACK
calls without the GIL, kernel logistic regression's Newton method and the Nyström solvers."""
