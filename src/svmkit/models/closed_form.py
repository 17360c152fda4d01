"""The base of the closed-form kernel models (kernel ridge, LS-SVM): the training kernel in
float64, the choice of linear-algebra solver, and the Nyström path for N past memory."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from svmkit._validation import check_int, check_params, one_of, real
from svmkit.gpu.gram import device_gram, device_rows
from svmkit.gpu.runtime import DEVICES, array_module
from svmkit.kernels.gram import SparseColumns, kernel_block, kernel_diag, row_sq_norms
from svmkit.models.expansion import KernelExpansion
from svmkit.solvers.factorisations import CholeskyShift, EigenShift, MixedCholeskyShift, NotPositiveDefiniteError
from svmkit.solvers.nystrom import NYSTROM_BLOCK_ELEMENTS, NYSTROM_DIRECT_MAX, nystrom_solve
from svmkit.solvers.packed import PACKED_MAX_N, PackedMixedCholesky

#: Largest N that 'auto' solves exactly (the packed float64 kernel and float32 factor: 5.4 GB at
#: 30,000).
AUTO_EXACT_MAX = 30_000
#: Centres 'auto' takes for Nyström past AUTO_EXACT_MAX.
AUTO_COMPONENTS = 2_000
#: Most rows through which leverage scores are approximated.
LEVERAGE_SAMPLE = 512


def check_components(value, name):
    if value is not None and check_int(value, name) < 1:
        raise ValueError(f"{name} must be None or a positive integer, got {name}={value!r}")
    return value


class ClosedFormModel(KernelExpansion):
    """Kernel models whose fit is one symmetric positive definite solve with H = K + sI."""

    # their dense β are large (‖β‖₁ ~ 10⁴ at λ = 10⁻³): float32 blocks would cost ~10⁻⁴ of
    # the prediction
    _device_dtype = np.float64

    _constraints = {**KernelExpansion._constraints,
                    "solver": one_of("auto", "cholesky", "eigen", "nystrom"),
                    "n_components": check_components, "tol": real(low=0),
                    "centers": one_of("uniform", "leverage"), "device": one_of(*DEVICES)}

    def _check_fit_params(self):
        check_params(self, self._constraints)
        if self.solver == "nystrom" and self.kernel == "precomputed":
            raise ValueError("solver='nystrom' computes kernel blocks from X; it cannot take kernel='precomputed'")

    def _xp(self):
        """The array module of the fit's kernel matrix: NumPy, or CuPy with `device='cuda'`."""
        return array_module("cuda") if self._on_device() else np

    def _host_only(self, what):
        if self._on_device():
            raise ValueError(f"{what} runs on device='cpu'; device='cuda' fits with solver='cholesky', or "
                             f"'nystrom' with at most {NYSTROM_DIRECT_MAX} centres")

    def _solver_for(self, n):
        """The solver for n rows; raises when `loo` asks for what Nyström cannot give, or the
        device for what it does not run."""
        solver = self.solver
        if self._on_device():
            if solver == "eigen":
                self._host_only("solver='eigen'")
            if solver == "nystrom" and self._components() > NYSTROM_DIRECT_MAX:
                self._host_only(f"Nyström with {self._components()} centres (conjugate gradient)")
            solver = "nystrom" if solver == "nystrom" else "cholesky"
        elif solver == "auto":
            solver = "cholesky" if n <= AUTO_EXACT_MAX or self.kernel == "precomputed" else "nystrom"
        if self.loo and solver == "nystrom":
            raise ValueError("loo=True needs an exact solver ('cholesky' or 'eigen'), not 'nystrom'")
        return solver

    def _kernel_matrix(self, X, spec, Xk, scale=None):
        """K(X, X) in float64 (times scale_i·scale_j when `scale` is given), a fresh array the
        solver may overwrite (on the GPU with `device='cuda'`: a CuPy array)."""
        if self._on_device():
            xp = self._xp()
            D, sq = device_rows(xp, spec, Xk, dtype=np.float64)
            K = device_gram(xp, spec, D, D, sq, sq)
        elif spec.is_precomputed:
            K = np.array(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        else:
            K = kernel_block(spec, Xk, Xk)
        if scale is not None:
            S = self._xp().asarray(scale)[:, None]
            K *= S
            K *= S.T
        return K

    def _kernel_rows(self, spec, Xk, scale=None):
        """rows(lo, hi) → K[lo:hi, lo:] in float64 (times scale_i·scale_j with `scale`), in one
        reused buffer (a callable kernel's own arrays): the training kernel by blocks of rows,
        from each block's diagonal on."""
        n = Xk.shape[0]
        sparse = sp.issparse(Xk)
        sq = row_sq_norms(Xk) if spec.uses_norms else None
        # sparse data's column split is made once: its rows are computed whole, then cut
        split = SparseColumns(Xk) if sparse and not (spec.is_precomputed or spec.is_callable) else None
        buf = None

        def rows(lo, hi):
            nonlocal buf
            if buf is None and not spec.is_callable:
                buf = np.empty((hi - lo) * n)
            if spec.is_precomputed:
                K = buf[:(hi - lo) * (n - lo)].reshape(hi - lo, n - lo)
                K[...] = Xk[lo:hi, lo:].toarray() if sparse else Xk[lo:hi, lo:]
            elif split is not None:
                K = kernel_block(spec, Xk[lo:hi], Xk, sq, out=buf, b_split=split)[:, lo:]
            else:
                K = kernel_block(spec, Xk[lo:hi], Xk[lo:], None if sq is None else sq[lo:], out=buf)
            if scale is not None:
                K *= scale[lo:hi, None]
                K *= scale[None, lo:]
            return K

        return rows

    def _factor(self, solver, shift, X, spec, Xk, scale=None):
        """K + shift·I (K = S·K(X, X)·S with S = diag(`scale`) when given) factorised for `solver`
        ('cholesky' or 'eigen'); the result has `solve(B)` (and, with `loo`, `inverse_diag()`),
        arrays of the kernel's array module. 'cholesky' factorises in float32 and refines to
        float64 (MixedCholeskyShift); on the host from the kernel's rows into packed storage
        (PackedMixedCholesky, never the N × N kernel) up to PACKED_MAX_N rows, except for `loo`,
        whose diag(H⁻¹) needs the float64 factor of the whole kernel."""
        if solver == "cholesky" and not self.loo and not self._on_device() and Xk.shape[0] <= PACKED_MAX_N:
            return PackedMixedCholesky(Xk.shape[0], self._kernel_rows(spec, Xk, scale), shift)
        return self._factor_of(solver, self._kernel_matrix(X, spec, Xk, scale), shift)

    def _factor_of(self, solver, K, shift):
        """`_factor` for a kernel matrix K already made (K may be overwritten)."""
        if solver == "eigen":
            return EigenShift(K).at(shift)
        factor = CholeskyShift if self.loo else MixedCholeskyShift
        return factor(K, shift, self._xp())

    def _components(self):
        """The Nyström centres M asked for (`n_components`, None: AUTO_COMPONENTS)."""
        return AUTO_COMPONENTS if self.n_components is None else self.n_components

    def _centres(self, n, spec=None, Xk=None, shift=None):
        """Indices of the Nyström centres, sorted, drawn without replacement: uniformly, or with
        probabilities proportional to approximate ridge leverage scores (`centers='leverage'`)."""
        m = self._components()
        if m > n:
            raise ValueError(f"n_components={m} is larger than the number of samples ({n})")
        rng = np.random.default_rng(self.random_state)
        if self.centers == "uniform" or m == n:
            return np.sort(rng.choice(n, size=m, replace=False))
        sample = np.sort(rng.choice(n, size=min(m, LEVERAGE_SAMPLE), replace=False))
        scores = np.maximum(self._leverage_scores(spec, Xk, shift, sample), np.finfo(float).tiny)
        return np.sort(rng.choice(n, size=m, replace=False, p=scores / scores.sum()))

    @staticmethod
    def _leverage_scores(spec, Xk, shift, sample):
        """Ridge leverage scores τ_i = [K(K + sI)⁻¹]_ii approximated through the rows `sample`
        (Alaoui & Mahoney 2015): τ_i ≈ (K_ii − k_iSᵀ(K_SS + sI)⁻¹k_iS) / s, exact when the
        sample is every row. Computed in row blocks, O(N·|S|²)."""
        S = Xk[sample]
        s_sq = row_sq_norms(S) if spec.uses_norms else None
        factor = CholeskyShift(kernel_block(spec, S, S), shift)
        diag = kernel_diag(spec, Xk)
        n = Xk.shape[0]
        step = max(1, NYSTROM_BLOCK_ELEMENTS // sample.size)
        scores = np.empty(n)
        for lo in range(0, n, step):
            Kb = kernel_block(spec, Xk[lo:lo + step], S, s_sq)
            scores[lo:lo + step] = diag[lo:lo + step] - np.einsum("ij,ji->i", Kb, factor.solve(Kb.T))
        return scores / shift

    def _nystrom(self, spec, Xk, B, shift, bias, row_scale=None):
        """β over the centres (and b when `bias`) minimising ‖S K_NM β + b − B‖² + shift·βᵀK_MM β,
        S = diag(`row_scale`), by the normal equations or preconditioned CG (see `nystrom_solve`). Returns (centres, β, b)."""
        centres = self._centres(Xk.shape[0], spec, Xk, shift)
        C = Xk[centres]
        xp = self._xp()
        if self._on_device():
            D, sq = device_rows(xp, spec, Xk, dtype=np.float64)
            at = xp.asarray(centres)
            D_C, sq_C = D[at], None if sq is None else sq[at]
            scale = None if row_scale is None else xp.asarray(row_scale)

            def kernel_rows(rows, keep):
                return device_gram(xp, spec, D[rows], D_C, None if sq is None else sq[rows], sq_C)
        else:
            scale = row_scale
            c_sq = row_sq_norms(C) if spec.uses_norms else None
            # one buffer for every block: fresh pages would be faulted in on every pass
            buf = np.empty(min(Xk.shape[0], max(1, NYSTROM_BLOCK_ELEMENTS // C.shape[0])) * C.shape[0])

            def kernel_rows(rows, keep):
                return kernel_block(spec, Xk[rows], C, c_sq, out=None if keep else buf)

        def block(rows, keep=False):
            K = kernel_rows(rows, keep)
            if scale is not None:
                K *= scale[rows, None]
            return K

        beta, b = nystrom_solve(block, Xk.shape[0], kernel_block(spec, C, C), B, shift, bias, self.tol, xp=xp)
        return centres, beta, b

    def _set_expansion(self, X, centres, beta, intercept, support_vectors=None):
        """Store centres (rows `centres` of X, or `support_vectors` when given) and weights
        (β: n_centres × n_outputs) for prediction."""
        if support_vectors is None:
            self._store_support(X, centres)
        else:
            self.support_ = np.asarray(centres, dtype=np.int32)
            self.support_vectors_ = support_vectors
        self._dual_coef_ = np.ascontiguousarray(beta.T)
        self._intercept_ = np.asarray(intercept, dtype=np.float64).reshape(-1)
        self.shape_fit_ = X.shape
        self._prepare_prediction()


__all__ = ["ClosedFormModel", "NotPositiveDefiniteError"]
