"""The base of the dense kernel expansions (kernel ridge, LS-SVM, kernel logistic regression),
in which every training point (or every Nyström centre) carries weight: the choice of
linear-algebra solver on the fit's backend, and the Nyström path for N past memory."""

from __future__ import annotations


import numpy as np

from svmkit._threads import compiled_threads, one_blas_thread
from svmkit._validation import check_components, check_seed, one_of, real
from svmkit.exceptions import warn
from svmkit.models.expansion import FitSession, KernelExpansion
from svmkit.solvers.dense.factorisations import CholeskyShift, NotPositiveDefiniteError
from svmkit.solvers.dense.nystrom import NYSTROM_BLOCK_ELEMENTS, NYSTROM_DIRECT_MAX, nystrom_solve

#: Largest N that 'auto' solves exactly (the packed float64 kernel and float32 factor: 5.4 GB at
#: 30,000).
AUTO_EXACT_MAX = 30_000
#: Rows up to which a fit runs BLAS on one thread.
SERIAL_ROWS = 2_000
#: Centres 'auto' takes for Nyström past AUTO_EXACT_MAX.
AUTO_COMPONENTS = 2_000
#: Most rows through which leverage scores are approximated.
LEVERAGE_SAMPLE = 512


class DenseExpansionModel(KernelExpansion):
    """Kernel models whose β is dense over the training rows (or Nyström centres); the
    closed-form ones solve one symmetric positive definite system with H = K + sI."""

    # their dense β are large (‖β‖₁ ~ 10⁴ at λ = 10⁻³): float32 blocks would cost ~10⁻⁴ of
    # the prediction
    _device_dtype = np.float64

    _constraints = {**KernelExpansion._constraints,
                    "solver": one_of("auto", "cholesky", "eigen", "nystrom"),
                    "n_components": check_components, "tol": real(low=0),
                    "centers": one_of("uniform", "leverage"), "random_state": check_seed}

    def _fit_session(self, session: FitSession, starts=None):
        """The fit, on one BLAS and one compiled-loop thread up to SERIAL_ROWS rows: there threads gain
        little, and beside another busy process OpenBLAS's spin for a core and the compiled loops
        wait for a descheduled one (KernelRidge at 700 rows with one core busy elsewhere:
        `benchmarks/bench_threads.py`)."""
        if session.X.shape[0] > SERIAL_ROWS:
            return super()._fit_session(session, starts)
        with one_blas_thread(), compiled_threads(1):
            return super()._fit_session(session, starts)

    def _solver_for(self, session: FitSession, n):
        """The solver for n rows; raises when `loo` asks for what Nyström cannot give, or the
        backend for what it does not run."""
        backend, kernel = session.backend, session.kernel
        if getattr(self, "loo", False) and n < 2:
            raise ValueError(f"loo=True needs at least 2 samples to leave one out, got {n}")
        solver = backend.auto_solver(kernel, n, AUTO_EXACT_MAX) if self.solver == "auto" else self.solver
        instead = f"fits with solver='cholesky', or 'nystrom' with at most {NYSTROM_DIRECT_MAX} centres"
        backend.require(solver, f"solver={solver!r}", instead)
        if solver == "nystrom":
            m = self._components(n)
            backend.require("nystrom" if m <= NYSTROM_DIRECT_MAX else "nystrom-cg",
                            f"Nyström with {m} centres (conjugate gradient)", instead)
            if self.loo:
                raise ValueError("loo=True needs an exact solver ('cholesky' or 'eigen'), not 'nystrom'")
        return solver

    def _components(self, n):
        """The Nyström centres M asked for: `n_components`, or for None AUTO_COMPONENTS, at
        most the n training rows (a small data set takes every row as a centre)."""
        return min(AUTO_COMPONENTS, n) if self.n_components is None else self.n_components

    def _centres(self, n, kernel=None, Xk=None, shift=None):
        """Indices of the Nyström centres, sorted, drawn without replacement: uniformly, or with
        probabilities proportional to approximate ridge leverage scores (`centers='leverage'`)."""
        m = self._components(n)
        if m > n:
            warn(f"n_components={m} is larger than the number of samples ({n}): every row is "
                 "a centre (n_components = n_samples), as scikit-learn's Nystroem", UserWarning)
            m = n
        rng = np.random.default_rng(self.random_state)
        if self.centers == "uniform" or m == n:
            return np.sort(rng.choice(n, size=m, replace=False))
        sample = np.sort(rng.choice(n, size=min(m, LEVERAGE_SAMPLE), replace=False))
        scores = np.maximum(self._leverage_scores(kernel, Xk, shift, sample), np.finfo(float).tiny)
        return np.sort(rng.choice(n, size=m, replace=False, p=scores / scores.sum()))

    @staticmethod
    def _leverage_scores(kernel, Xk, shift, sample):
        """Ridge leverage scores τ_i = [K(K + sI)⁻¹]_ii approximated through the rows `sample`
        (Alaoui & Mahoney 2015): τ_i ≈ (K_ii − k_iSᵀ(K_SS + sI)⁻¹k_iS) / s, exact when the
        sample is every row. Computed in row blocks, O(N·|S|²)."""
        S = Xk[sample]
        s_sq = kernel.sq_norms(S)
        factor = CholeskyShift(kernel.block(S, S), shift)
        diag = kernel.diag(Xk)
        n = Xk.shape[0]
        step = max(1, NYSTROM_BLOCK_ELEMENTS // sample.size)
        scores = np.empty(n)
        for lo in range(0, n, step):
            Kb = kernel.block(Xk[lo:lo + step], S, s_sq)
            scores[lo:lo + step] = diag[lo:lo + step] - np.einsum("ij,ji->i", Kb, factor.solve(Kb.T))
        return scores / shift

    def _nystrom(self, session: FitSession, Xk, B, shift, bias, row_scale=None):
        """β over the centres (and b when `bias`) minimising ‖S K_NM β + b − B‖² + shift·βᵀK_MM β,
        S = diag(`row_scale`), by the normal equations or preconditioned CG (see `nystrom_solve`),
        K_NM's blocks on the session's backend. Returns (centres, β, b)."""
        kernel, backend = session.kernel, session.backend
        centres = self._centres(Xk.shape[0], kernel, Xk, shift)
        rows = backend.centre_rows(kernel, Xk, centres, NYSTROM_BLOCK_ELEMENTS, row_scale)
        C = Xk[centres]
        beta, b = nystrom_solve(rows, Xk.shape[0], kernel.block(C, C), B, shift, bias, self.tol, xp=backend.xp)
        return centres, beta, b

    def _store_expansion(self, session: FitSession, centres, beta, intercept):
        """Store the centres (rows `centres` of the training data) and their weights."""
        self._store_support(session, centres)
        self._set_weights(session.X.shape, beta, intercept)

    def _set_weights(self, shape, beta, intercept):
        """Store the weights (β: n_centres × n_outputs) and intercepts for prediction."""
        self._dual_coef_ = np.ascontiguousarray(beta.T)
        self._intercept_ = np.asarray(intercept, dtype=np.float64).reshape(-1)
        self.shape_fit_ = shape
        self._prepared = self._prediction_kernel()


__all__ = ["DenseExpansionModel", "NotPositiveDefiniteError"]
