"""The GPU backend: the device option, its errors where CuPy or a device is missing, the
device kernel code run through NumPy (the same array API CuPy implements) against the CPU
kernels and the CPU fit, and, where a CUDA device is present, the GPU fit against the CPU's."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_regressor

import svmkit
from conftest import breast_cancer, diabetes, digits, heart_scale, iris
from svmkit import Options, backend
from svmkit.backend import DeviceUnavailableError, cuda_available
from svmkit.kernels import device
from svmkit.kernels.device import DeviceKernel, device_gram, device_kernel_products, device_rows
from svmkit.kernels.gram import TrainingKernel, kernel_block
from svmkit.kernels import kinds
from svmkit.kernels.kinds import make_kernel
from svmkit.model_selection import KernelRidgeCV, LSSVMCV, SVMSearchCV
from svmkit.models.smo.formulations import c_svc, nu_svc
from svmkit.solvers.smo import _cuda as _smo_cuda, _loops as _smo_loops
from svmkit.solvers.dense import factorisations, newton, nystrom
from svmkit.solvers.smo._block import Block, InnerSettings
from svmkit.solvers.smo.row_source import row_source
from svmkit.solvers.smo.solver import DualProblem, solve

#: The options of a fit on the GPU.
CUDA = Options(device="cuda")
needs_cuda = pytest.mark.skipif(not cuda_available(), reason="no CUDA device or CuPy here")

KERNELS = [("linear", {}), ("rbf", {"gamma": 0.3}), ("poly", {"gamma": 0.2, "degree": 3, "coef0": 1.0}),
           ("sigmoid", {"gamma": 0.01, "coef0": -0.5})]


def recorded_row_sources(patch) -> list:
    """The row sources the backend makes from now on (until `patch`, a MonkeyPatch, undoes it),
    in a list that fills as they are made."""
    sources, real = [], backend.row_source
    patch.setattr(backend, "row_source", lambda *a, **k: sources.append(real(*a, **k)) or sources[-1])
    return sources


@pytest.mark.parametrize("name, params", KERNELS)
@pytest.mark.parametrize("sparse", [False, True])
def test_device_gram_equals_the_cpu_kernel_in_float32(name, params, sparse):
    X, _ = heart_scale()
    X = sp.csr_matrix(X) if sparse else X
    spec = make_kernel(name, X, params.get("gamma", "scale"), params.get("degree", 3), params.get("coef0", 0.0))
    D, sq = device_rows(np, spec, X)
    K = device_gram(np, spec, D[:40], D, None if sq is None else sq[:40], sq)
    expected = kernel_block(spec, X[:40], X)
    assert K.dtype == np.float32
    np.testing.assert_allclose(K, expected, rtol=2e-5, atol=2e-5 * np.abs(expected).max())


def test_device_rows_are_centred_in_float64_by_blocks_and_leave_x_as_it_was(monkeypatch):
    """Data 10⁴ from the origin: centred before it is rounded to float32, its RBF rows keep
    their digits; dense and CSR data, sent by blocks of 10 rows, give the same rows."""
    monkeypatch.setattr(device, "PLACE_BYTES", 8 * 13 * 10)
    X, _ = heart_scale()
    X = X.toarray() + 1e4
    given = X.copy()
    spec = make_kernel("rbf", X, 0.3)
    D, sq = device_rows(np, spec, X)
    np.testing.assert_array_equal(X, given)
    np.testing.assert_allclose(device_gram(np, spec, D[:40], D, sq[:40], sq), kernel_block(spec, X[:40], X),
                               atol=2e-5)
    D_csr, sq_csr = device_rows(np, spec, sp.csr_matrix(X))
    np.testing.assert_array_equal(D_csr, D)
    np.testing.assert_array_equal(sq_csr, sq)


@pytest.mark.parametrize("name, params", KERNELS)
def test_device_kernel_products_equal_the_cpu_products(name, params):
    """Prediction on the device: K(X, centres) @ W in float32 blocks, X and the centres centred
    on the same vector for RBF."""
    X, _ = heart_scale()
    spec = make_kernel(name, X, params.get("gamma", "scale"), params.get("degree", 3), params.get("coef0", 0.0))
    W = np.random.default_rng(0).standard_normal((60, 3))
    got = device_kernel_products(np, spec, X, X[:60], W)
    expected = kernel_block(spec, X, X[:60]) @ W
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


@pytest.mark.parametrize("name, params", KERNELS)
def test_device_kernel_products_over_blocks_of_centres_equal_those_over_all(name, params, monkeypatch):
    """Centres that take more than the device memory left go a block at a time."""
    X, _ = heart_scale()
    spec = make_kernel(name, X, params.get("gamma", "scale"), params.get("degree", 3), params.get("coef0", 0.0))
    W = np.random.default_rng(0).standard_normal((60, 3))
    placed = []
    real = device.device_rows
    monkeypatch.setattr(device, "device_rows", lambda xp, spec, rows, *a: placed.append(rows.shape[0]) or
                        real(xp, spec, rows, *a))
    whole = device_kernel_products(np, spec, X, X[:60], W)
    assert placed == [60, X.shape[0]]
    monkeypatch.setattr(device, "NUMPY_DEVICE_BYTES", 4 * 13 * 10 * 4)  # 10 centres a block
    placed.clear()
    blocked = device_kernel_products(np, spec, X, X[:60], W)
    assert placed.count(10) >= 6 and max(placed) < X.shape[0]
    # float32 kernel values from GEMMs of other shapes: rounded differently
    np.testing.assert_allclose(blocked, whole, rtol=1e-5, atol=1e-5 * np.abs(whole).max())


def test_device_kernel_writes_the_rows_asked_for_into_the_host_store():
    X, _ = breast_cancer()
    spec = make_kernel("rbf", X, 0.05)
    kernel = DeviceKernel(np, spec, X)
    out = np.zeros((5, X.shape[0]), dtype=np.float32)
    kernel.rows_into(np.array([7, 3]), out, np.array([4, 1]))
    np.testing.assert_allclose(out[[4, 1]], kernel_block(spec, X[[7, 3]], X), rtol=1e-5, atol=1e-6)
    assert not out[[0, 2, 3]].any()
    np.testing.assert_array_equal(kernel.diag, np.ones(X.shape[0]))


@pytest.mark.parametrize("model", [svmkit.SVC(C=10.0, gamma=0.05), svmkit.NuSVC(nu=0.3, gamma=0.05),
                                   svmkit.SVR(C=3.0, epsilon=0.2), svmkit.OneClassSVM(nu=0.2, gamma=0.05)])
def test_a_fit_on_device_rows_equals_the_cpu_fit(model, numpy_as_cuda):
    X, y = heart_scale()
    cpu = clone(model).fit(X, y)
    gpu = clone(model).set_params(options=CUDA).fit(X, y)
    assert_same_fit(gpu, cpu, X)
    assert isinstance(gpu.dual_coef_, np.ndarray)


UPDATED = [svmkit.SVC(C=10.0, gamma=0.05, tol=1e-8), svmkit.NuSVR(nu=0.3, gamma=0.05, tol=1e-8)]


def assert_updates_equal_device_refits(model, X, y):
    """partial_fit in two batches, then forget, on the device: each the device's refit on the
    same rows (objective to 1e-6 relative at tol=1e-8)."""
    n = X.shape[0]
    update = clone(model).set_params(options=CUDA).partial_fit(X[: n - 20], y[: n - 20])
    update.partial_fit(X[n - 20:], y[n - 20:])
    whole = clone(model).set_params(options=CUDA).fit(X, y)
    np.testing.assert_allclose(update.objective_, whole.objective_, rtol=1e-6)
    keep = np.setdiff1d(np.arange(n), [0, 5, 100])
    update.forget([0, 5, 100])
    refit = clone(model).set_params(options=CUDA).fit(X[keep], y[keep])
    np.testing.assert_allclose(update.objective_, refit.objective_, rtol=1e-6)
    assert "_kept_rows" not in vars(update) or update._kept_rows is None  # no device memory held
    return update, refit


@pytest.mark.parametrize("model", UPDATED)
def test_updates_on_device_rows_equal_a_refit_there(model, numpy_as_cuda):
    X, y = heart_scale()
    assert_updates_equal_device_refits(model, X, y)


@needs_cuda
@pytest.mark.parametrize("model", UPDATED)
def test_gpu_updates_equal_a_gpu_refit(model):
    X, y = heart_scale()
    update, refit = assert_updates_equal_device_refits(model, X, y)
    keep = np.setdiff1d(np.arange(X.shape[0]), [0, 5, 100])
    assert_same_fit(update, clone(model).fit(X[keep], y[keep]), X)


def assert_same_fit(gpu, cpu, X):
    """The issue's agreement: dual objective within 1e-3 relative, predictions ≥ 99.5 % equal
    (regression: within 1e-3 of the targets' spread)."""
    np.testing.assert_allclose(gpu.objective_, cpu.objective_, rtol=1e-3)
    if is_regressor(cpu):
        spread = np.ptp(cpu.predict(X))
        np.testing.assert_allclose(gpu.predict(X), cpu.predict(X), atol=1e-3 * spread)
    else:
        assert np.mean(gpu.predict(X) == cpu.predict(X)) >= 0.995


@pytest.mark.parametrize("model", [svmkit.SVC(C=100.0), svmkit.NuSVC(nu=0.2)])
def test_multiclass_pairs_get_device_rows_over_their_own_columns(model, numpy_as_cuda):
    """Each class pair's rows over the pair's 100 columns, not the fit's 150: the same optimum."""
    X, y = iris()
    with pytest.MonkeyPatch.context() as patch:
        sources = recorded_row_sources(patch)
        gpu = clone(model).set_params(options=CUDA).fit(X, y)
    cpu = clone(model).fit(X, y)
    assert [s.n for s in sources] == [150, 100, 100, 100] and sources[0].computed_rows == 0
    np.testing.assert_allclose(gpu.objective_, cpu.objective_, rtol=1e-4)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))
    np.testing.assert_array_equal(gpu.support_, cpu.support_)


def test_rows_shared_by_several_fits_are_not_narrowed_to_a_pair(numpy_as_cuda):
    X, y = iris()
    cuda = backend.backend_for("cuda")
    kernel = make_kernel("rbf", X, 0.5)
    shared = cuda.training_rows(kernel, X, 10.0)
    pair = np.arange(50, 150)
    assert cuda.problem_rows(shared, pair) == (shared, pair)
    own = cuda.training_rows(kernel, X, 10.0, per_problem=True)
    narrowed, kidx = cuda.problem_rows(own, pair)
    np.testing.assert_array_equal(kidx, np.arange(100))
    store, pos = narrowed.fetch(np.array([0, 99]))
    np.testing.assert_allclose(store[pos], kernel_block(kernel, X[[50, 149]], X[50:]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", [svmkit.SVC(C=10.0, gamma=0.05), svmkit.NuSVC(nu=0.1, gamma=0.05)])
def test_class_pairs_on_a_device_are_solved_side_by_side_each_as_alone(model, numpy_as_cuda, monkeypatch):
    """iris's three class pairs at once, each from a thread on a stream of its own with a third
    of the cache: the α each pair gets alone, bit for bit."""
    X, y = iris()
    threads, new_stream = set(), backend._new_stream
    all_started = threading.Barrier(3, timeout=30)

    def each_waits_for_the_others(xp):  # else one thread may take every (small) pair
        threads.add(threading.get_ident())
        all_started.wait()
        return new_stream(xp)

    monkeypatch.setattr(backend, "_new_stream", each_waits_for_the_others)
    sources = recorded_row_sources(monkeypatch)
    together = clone(model).set_params(options=CUDA, cache_size=30.0).fit(X, y)
    assert len(threads) == 3 and threading.get_ident() not in threads
    assert [s.cache_size for s in sources] == [30.0, 10.0, 10.0, 10.0]
    monkeypatch.setattr(backend, "PROBLEM_STREAMS", 1)
    alone = clone(model).set_params(options=CUDA, cache_size=30.0).fit(X, y)
    assert len(threads) == 3
    np.testing.assert_array_equal(together.dual_coef_, alone.dual_coef_)
    np.testing.assert_array_equal(together.intercept_, alone.intercept_)
    np.testing.assert_array_equal(together.support_, alone.support_)


def test_class_pairs_whose_summaries_are_printed_are_solved_in_turn(numpy_as_cuda, monkeypatch, capsys):
    X, y = iris()
    threads = set()
    new_stream = backend._new_stream
    monkeypatch.setattr(backend, "_new_stream", lambda xp: threads.add(threading.get_ident()) or new_stream(xp))
    svmkit.SVC(gamma=0.05, options=CUDA, verbose=True).fit(X, y)
    assert threads == set()
    assert capsys.readouterr().out.count("optimization finished") == 3


@pytest.mark.parametrize("est, data, route", [
    (svmkit.KernelRidge(kernel="rbf", gamma=0.5), diabetes, "place"),
    (svmkit.KernelRidge(kernel="rbf", gamma=0.5, solver="nystrom", n_components=50), diabetes, "place"),
    (svmkit.SVC(gamma=0.05), heart_scale, "training_rows"),
    (svmkit.SVC(gamma=0.05), heart_scale, "products")])
def test_the_cuda_backend_takes_each_kernel_computation_to_the_device(est, data, route, numpy_as_cuda, monkeypatch):
    """Kernel matrices, Nyström's K_NM, the solver's rows and the expansion's products go
    through the device's arrays under device='cuda' (the host's under 'cpu')."""
    X, y = data()
    calls = []
    real = getattr(device.DeviceArrays, route)
    monkeypatch.setattr(device.DeviceArrays, route, lambda *a, **k: calls.append(1) or real(*a, **k))
    clone(est).fit(X, y).predict(X)
    assert calls == []
    clone(est).set_params(options=CUDA).fit(X, y).predict(X)
    assert calls


def test_the_kinds_are_siblings_that_name_no_device():
    """Every kind runs on either arrays; only a callable's centres keep their products on the host."""
    X, _ = heart_scale()
    dot, given, func = (make_kernel(k, X) for k in ("rbf", "precomputed", lambda a, b: a @ b.T))
    assert [k.centres(X[:3], np.arange(3)).runs_on_device for k in (dot, given, func)] == [True, True, False]
    assert not isinstance(given, kinds.DotKernel) and not isinstance(func, kinds.DotKernel)
    assert all(isinstance(k, kinds.KernelKind) for k in (dot, given, func))
    assert [name for k in (dot, given, func) for name in dir(k) if name.startswith("device_")] == []


def test_model_selection_takes_the_estimators_device(numpy_as_cuda, monkeypatch):
    X, y = heart_scale()
    kernels = []
    real = DeviceKernel.__init__
    monkeypatch.setattr(DeviceKernel, "__init__", lambda *a: kernels.append(1) or real(*a))
    grid = {"C": [1.0, 10.0], "gamma": [0.05]}
    gpu = SVMSearchCV(svmkit.SVC(options=CUDA), grid, cv=3, n_jobs=1).fit(X, y)
    cpu = SVMSearchCV(svmkit.SVC(), grid, cv=3, n_jobs=1).fit(X, y)
    assert kernels
    assert gpu.best_params_ == cpu.best_params_
    np.testing.assert_allclose(gpu.cv_results_["mean_test_score"], cpu.cv_results_["mean_test_score"], atol=0.005)


@pytest.mark.parametrize("value", ["gpu", "CUDA", 0, None])
def test_an_unknown_device_is_named(value):
    X, y = heart_scale()
    with pytest.raises(ValueError, match="device must be one of"):
        svmkit.SVC(options=Options(device=value)).fit(X, y)


@pytest.mark.skipif(cuda_available(), reason="a CUDA device is present")
def test_cuda_without_cupy_or_a_device_says_what_is_missing():
    X, y = heart_scale()
    with pytest.raises(DeviceUnavailableError, match=r"svmkit\[gpu\]|no CUDA device|CUDA driver"):
        svmkit.SVC(options=CUDA).fit(X, y)
    assert backend.backend_for("cpu").xp is np


CLOSED_FORM = [svmkit.KernelRidge(kernel="rbf", alpha=1e-3, gamma=0.5), svmkit.LSSVR(C=100.0, gamma=0.5, loo=True)]


def assert_same_closed_form_fit(device_model, cpu, X):
    """Same β and b as the CPU's float64 fit; predictions (float64 kernel blocks) to 1e-5."""
    np.testing.assert_allclose(device_model.dual_coef_, cpu.dual_coef_, rtol=1e-6,
                               atol=1e-6 * np.abs(cpu.dual_coef_).max())
    np.testing.assert_allclose(device_model.intercept_, cpu.intercept_, rtol=1e-6, atol=1e-9)
    expected = cpu.predict(X)
    np.testing.assert_allclose(device_model.predict(X), expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    if getattr(cpu, "loo", False):
        np.testing.assert_allclose(device_model.loo_residuals_, cpu.loo_residuals_, rtol=1e-6,
                                   atol=1e-6 * np.abs(cpu.loo_residuals_).max())


@pytest.mark.parametrize("model", CLOSED_FORM)
def test_closed_form_fit_through_the_device_code_equals_the_cpu_fit(model, numpy_as_cuda, device_linear_algebra):
    X, y = diabetes()
    X = X * 10.0  # diabetes's columns are scaled to norm 1: this spreads them to unit scale
    cpu = clone(model).fit(X, y)
    assert_same_closed_form_fit(clone(model).set_params(options=CUDA).fit(X, y), cpu, X)


def test_device_ridge_with_weights_and_one_vs_one_lssvc_with_loo_equal_the_cpu_fits(numpy_as_cuda,
                                                                                     device_linear_algebra):
    X, y = diabetes()
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=y.size)
    cpu = svmkit.KernelRidge(kernel="rbf", alpha=0.01, gamma=5.0).fit(X, y, sample_weight=w)
    gpu = svmkit.KernelRidge(kernel="rbf", alpha=0.01, gamma=5.0, options=CUDA).fit(X, y, sample_weight=w)
    assert_same_closed_form_fit(gpu, cpu, X)
    Xi, yi = iris()
    cpu = svmkit.LSSVC(C=10.0, gamma=0.5, multi_class="ovo", loo=True).fit(Xi, yi)
    gpu = svmkit.LSSVC(C=10.0, gamma=0.5, multi_class="ovo", loo=True, options=CUDA).fit(Xi, yi)
    np.testing.assert_allclose(gpu.dual_coef_, cpu.dual_coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gpu.loo_decision_, cpu.loo_decision_, rtol=1e-6, atol=1e-8)


def test_device_cholesky_solves_and_inverse_diagonal_equal_dense_linear_algebra(device_linear_algebra):
    X, _ = diabetes()
    K = X @ X.T * 50.0
    H = K + 0.1 * np.eye(K.shape[0])  # cond(H) ≈ 1e6
    B = np.random.default_rng(1).normal(size=(K.shape[0], 2))
    mixed = factorisations.MixedCholeskyShift(K.copy(), 0.1)
    solved = mixed.solve(B)
    assert mixed.factor32 is not None
    assert np.linalg.norm(H @ solved - B) <= 1e-10 * np.linalg.norm(B)
    np.testing.assert_allclose(solved, np.linalg.solve(H, B), rtol=1e-7, atol=1e-8 * np.abs(solved).max())
    np.testing.assert_allclose(factorisations.CholeskyShift(K.copy(), 0.1, np).inverse_diag(),
                               np.diag(np.linalg.inv(H)), rtol=1e-8)
    singular32 = factorisations.MixedCholeskyShift(np.array([[1.0, 1.0 - 1e-9], [1.0 - 1e-9, 1.0]]), 0.0)
    assert singular32.factor32 is None


def test_the_device_refuses_only_what_has_no_device_path_and_names_it(numpy_as_cuda, device_linear_algebra):
    X, y = diabetes()
    with pytest.raises(ValueError, match="loo=True needs an exact solver"):
        svmkit.KernelRidge(kernel="rbf", solver="nystrom", loo=True, options=CUDA).fit(X, y)
    # the host core's batch of small duals is no refusal: each pair takes the per-pair path there
    assert backend.CudaBackend.solvers == backend.HostBackend.solvers - {"dask", "smo-batch"}
    with pytest.raises(ValueError, match="a Dask array X runs on device='cpu'"):
        backend.backend_for("cuda").require("dask", "a Dask array X")


#: Device fits of the closed-form models and KLR, each with what its CPU fit is compared on.
DENSE_CASES = {
    "ridge-cholesky": (svmkit.KernelRidge(kernel="rbf", alpha=1e-3, gamma=0.5), "diabetes"),
    "ridge-eigen-loo": (svmkit.KernelRidge(kernel="rbf", alpha=1e-2, gamma=0.5, solver="eigen", loo=True), "diabetes"),
    "ridge-nystrom-cg": (svmkit.KernelRidge(kernel="rbf", alpha=1e-2, gamma=0.5, solver="nystrom", n_components=60,
                                            random_state=0), "diabetes"),
    "lssvr-loo": (svmkit.LSSVR(C=100.0, gamma=0.5, loo=True), "diabetes"),
    "lssvr-eigen-loo": (svmkit.LSSVR(C=10.0, gamma=0.5, solver="eigen", loo=True), "diabetes"),
    "lssvc-ovo-loo": (svmkit.LSSVC(C=10.0, gamma=0.5, multi_class="ovo", loo=True), "iris"),
    "lssvc-ovr-loo": (svmkit.LSSVC(C=10.0, gamma=0.5, loo=True), "iris"),
    "klr-newton": (svmkit.KernelLogisticRegression(C=10.0, gamma=0.5, random_state=0), "iris"),
    "klr-nystrom": (svmkit.KernelLogisticRegression(C=10.0, gamma=0.5, solver="nystrom", n_components=60,
                                                    random_state=0), "iris"),
}


def dense_case(name):
    model, data = DENSE_CASES[name]
    X, y = diabetes() if data == "diabetes" else iris()
    return clone(model), X, y


def assert_same_dense_fit(gpu, cpu, X, rtol=1e-5):
    """The issue's agreement of the dense expansions: β, b, the LOO values and the predictions
    (probabilities for KLR) of the device fit within `rtol` of the CPU's, relative to their
    largest."""
    def close(a, b):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(np.abs(b).max(), 1e-12))

    close(gpu.dual_coef_, cpu.dual_coef_)
    close(gpu.intercept_, cpu.intercept_)
    for name in ("loo_residuals_", "loo_decision_"):
        if getattr(cpu, name, None) is not None:
            close(getattr(gpu, name), getattr(cpu, name))
    close(gpu.predict_proba(X) if hasattr(cpu, "predict_proba") else gpu.predict(X),
          cpu.predict_proba(X) if hasattr(cpu, "predict_proba") else cpu.predict(X))


@pytest.mark.parametrize("name", list(DENSE_CASES))
def test_dense_expansions_through_the_device_code_equal_the_cpu_fits(name, numpy_as_cuda, device_linear_algebra,
                                                                    monkeypatch):
    """Every exact and Nyström solver of kernel ridge, LS-SVM and KLR through the device code
    (Nyström past NYSTROM_DIRECT_MAX by the device's CG)."""
    monkeypatch.setattr(nystrom, "NYSTROM_DIRECT_MAX", 50)
    model, X, y = dense_case(name)
    cpu = clone(model).fit(X, y)
    gpu = clone(model).set_params(options=CUDA).fit(X, y)
    assert_same_dense_fit(gpu, cpu, X)


@needs_cuda
@pytest.mark.parametrize("name", list(DENSE_CASES))
def test_gpu_dense_expansions_equal_the_cpu_fits(name, monkeypatch):
    monkeypatch.setattr(nystrom, "NYSTROM_DIRECT_MAX", 50)
    model, X, y = dense_case(name)
    cpu = clone(model).fit(X, y)
    gpu = clone(model).set_params(options=CUDA).fit(X, y)
    assert_same_dense_fit(gpu, cpu, X)


#: Models calibrated on their device rows, with their data: Platt's sigmoid per class pair,
#: SVR's Laplace scale, the one-class density marks.
PROBABILITY_MODELS = [(svmkit.SVC(C=10.0, gamma=0.5, probability=True, random_state=0), "iris"),
                      (svmkit.NuSVC(nu=0.3, gamma=0.5, probability=True, random_state=0), "iris"),
                      (svmkit.SVR(C=3.0, epsilon=0.1, probability=True, random_state=0), "diabetes"),
                      (svmkit.OneClassSVM(nu=0.2, gamma=0.5, probability=True), "iris")]


def assert_same_calibration(model, data):
    """The calibration's fitted values and the probabilities of the device fit as the CPU
    fit's, from float32 kernel rows on both sides (the device's GEMM rounds them differently)."""
    X, y = iris() if data == "iris" else diabetes()
    cpu = clone(model).fit(X, y)
    gpu = clone(model).set_params(options=CUDA).fit(X, y)
    names = [name for name in ("probA_", "probB_", "prob_density_marks_") if hasattr(cpu, name)]
    assert names
    for name in names:
        np.testing.assert_allclose(getattr(gpu, name), getattr(cpu, name), rtol=1e-3, atol=1e-3)
    if hasattr(cpu, "predict_proba"):
        np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), atol=1e-3)


@pytest.mark.parametrize("model, data", PROBABILITY_MODELS)
def test_probability_calibration_through_the_device_rows_equals_the_cpu_calibration(model, data, numpy_as_cuda):
    assert_same_calibration(model, data)


@needs_cuda
@pytest.mark.parametrize("model, data", PROBABILITY_MODELS)
def test_gpu_probability_calibration_equals_the_cpu_calibration(model, data):
    assert_same_calibration(model, data)


@pytest.mark.parametrize("system", ["cholesky", "cg"])
def test_device_kernel_logistic_regression_equals_the_cpu_fit(system, numpy_as_cuda, monkeypatch):
    """The kernel on the device and the Newton systems' products with it there."""
    if system == "cg":
        monkeypatch.setattr(newton, "DENSE_MAX", 0)
    X, y = iris()
    make = lambda **kw: svmkit.KernelLogisticRegression(C=10.0, gamma=0.5, random_state=0, **kw)  # noqa: E731
    cpu, gpu = make().fit(X, y), make(options=CUDA).fit(X, y)
    assert gpu.n_iter_ == cpu.n_iter_ and gpu.objective_ == pytest.approx(cpu.objective_, rel=1e-12)
    np.testing.assert_allclose(gpu.dual_coef_, cpu.dual_coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), rtol=1e-8, atol=1e-12)


@needs_cuda
@pytest.mark.parametrize("solver", ["newton", "nystrom"])
def test_gpu_kernel_logistic_regression_equals_the_cpu_fit(solver):
    X, y = iris()
    make = lambda **kw: svmkit.KernelLogisticRegression(C=10.0, gamma=0.5, solver=solver, n_components=60,  # noqa: E731
                                                        random_state=0, **kw)
    cpu, gpu = make().fit(X, y), make(options=CUDA).fit(X, y)
    assert gpu.objective_ == pytest.approx(cpu.objective_, rel=1e-8)
    np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), rtol=1e-6, atol=1e-9)


@needs_cuda
@pytest.mark.parametrize("values", [2, 9])
def test_gpu_loo_searches_equal_the_cpu_searches(values):
    X, y = diabetes()
    regs = list(np.logspace(-3, 1, values))
    cpu = KernelRidgeCV(alphas=regs, gammas=[1.0, 5.0]).fit(X, y)
    gpu = KernelRidgeCV(alphas=regs, gammas=[1.0, 5.0], options=CUDA).fit(X, y)
    np.testing.assert_allclose(gpu.cv_results_["loo_score"], cpu.cv_results_["loo_score"], rtol=1e-6)
    assert gpu.best_params_ == cpu.best_params_
    Cs = [1.0 / r for r in regs]
    cpu = LSSVMCV(svmkit.LSSVR(), Cs=Cs, gammas=[5.0]).fit(X, y)
    gpu = LSSVMCV(svmkit.LSSVR(options=CUDA), Cs=Cs, gammas=[5.0]).fit(X, y)
    np.testing.assert_allclose(gpu.cv_results_["loo_score"], cpu.cv_results_["loo_score"], rtol=1e-6)


@needs_cuda
def test_gpu_svm_search_shares_each_gammas_kernel_and_equals_the_cpu_search():
    X, y = heart_scale()
    grid = {"C": [1.0, 10.0], "gamma": [0.05, 0.2]}
    gpu = SVMSearchCV(svmkit.SVC(options=CUDA), grid, cv=3, n_jobs=1).fit(X, y)
    cpu = SVMSearchCV(svmkit.SVC(), grid, cv=3, n_jobs=1).fit(X, y)
    assert gpu.best_params_ == cpu.best_params_
    np.testing.assert_allclose(gpu.cv_results_["mean_test_score"], cpu.cv_results_["mean_test_score"], atol=0.005)


@pytest.mark.parametrize("model", [svmkit.KernelRidge(kernel="rbf", alpha=0.01, gamma=5.0), svmkit.LSSVR(C=30.0, gamma=5.0)])
def test_device_nystrom_equals_the_cpu_nystrom(model, numpy_as_cuda, monkeypatch):
    """The K_NM blocks and the normal equations' sums on the device, in several row blocks."""
    monkeypatch.setattr(nystrom, "NYSTROM_BLOCK_ELEMENTS", 100 * 40)
    X, y = diabetes()
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=y.size)
    fit_params = {"sample_weight": w} if isinstance(model, svmkit.KernelRidge) else {}
    model = clone(model).set_params(solver="nystrom", n_components=40, random_state=0)
    cpu = clone(model).fit(X, y, **fit_params)
    gpu = clone(model).set_params(options=CUDA).fit(X, y, **fit_params)
    np.testing.assert_array_equal(gpu.support_, cpu.support_)
    assert_same_closed_form_fit(gpu, cpu, X)


@needs_cuda
@pytest.mark.parametrize("model", CLOSED_FORM)
def test_gpu_closed_form_fit_equals_the_cpu_fit(model):
    import cupy

    X, y = diabetes()
    X = X * 10.0
    cpu = clone(model).fit(X, y)
    gpu = clone(model).set_params(options=CUDA).fit(cupy.asarray(X), cupy.asarray(y))
    assert_same_closed_form_fit(gpu, cpu, X)


@needs_cuda
@pytest.mark.parametrize("model", [svmkit.SVC(C=10.0, gamma=0.05), svmkit.NuSVR(nu=0.3, C=3.0)])
def test_gpu_fit_equals_the_cpu_fit(model):
    import cupy

    X, y = heart_scale()
    cpu = clone(model).fit(X, y)
    gpu = clone(model).set_params(options=CUDA).fit(cupy.asarray(X.toarray()), cupy.asarray(y))
    assert_same_fit(gpu, cpu, X)
    assert isinstance(gpu.support_vectors_, np.ndarray)


@needs_cuda
def test_gpu_multiclass_fit_on_each_pairs_own_columns_equals_the_cpu_fit():
    X, y = digits()
    cpu = svmkit.SVC(C=10.0, gamma=0.05).fit(X, y)
    gpu = svmkit.SVC(C=10.0, gamma=0.05, options=CUDA).fit(X, y)
    np.testing.assert_allclose(gpu.objective_, cpu.objective_, rtol=1e-3)
    assert np.mean(gpu.predict(X) == cpu.predict(X)) >= 0.995


@needs_cuda
def test_gpu_class_pairs_side_by_side_equal_the_pairs_in_turn(monkeypatch):
    """digits' 45 class pairs on eight streams at once against one at a time on the device."""
    X, y = digits()
    together = svmkit.SVC(C=10.0, gamma=0.05, options=CUDA).fit(X, y)
    monkeypatch.setattr(backend, "PROBLEM_STREAMS", 1)
    in_turn = svmkit.SVC(C=10.0, gamma=0.05, options=CUDA).fit(X, y)
    np.testing.assert_allclose(together.objective_, in_turn.objective_, rtol=1e-9)
    np.testing.assert_array_equal(together.predict(X), in_turn.predict(X))
    np.testing.assert_array_equal(together.support_, in_turn.support_)


def small_cache_problem():
    """breast_cancer's C-SVC dual and its kernel, with a cache of 64 rows: the solver then
    works in blocks of 32 variables and evicts rows."""
    X, y = breast_cancer()
    n = X.shape[0]
    problem = DualProblem(p=-np.ones(n), y=np.where(y > 0, 1.0, -1.0), upper=np.full(n, 10.0), kidx=np.arange(n))
    return X, problem, make_kernel("rbf", X, 0.05)


def test_the_solver_in_blocks_on_a_device_row_cache_equals_the_host_solver():
    """The solver's outer loop is written once for NumPy and CuPy: run on NumPy through the
    device kernel, it finds the host solver's optimum."""
    X, problem, spec = small_cache_problem()
    cpu = solve(problem, row_source(TrainingKernel(spec, X), 0.1))
    dev = solve(problem, row_source(DeviceKernel(np, spec, X), 0.1))
    assert cpu.n_iter > 0 and dev.n_iter > 0
    np.testing.assert_allclose(dev.objective, cpu.objective, rtol=1e-4)


@needs_cuda
def test_gpu_solver_in_blocks_equals_the_host_solver():
    """The CUDA subproblem and gradient kernels, with rows evicted from the device cache."""
    import cupy

    X, problem, spec = small_cache_problem()
    rows = row_source(DeviceKernel(cupy, spec, X), 0.1)
    assert rows.xp is cupy and rows.capacity == 64
    cpu = solve(problem, row_source(TrainingKernel(spec, X), 0.1))
    gpu = solve(problem, rows)
    assert isinstance(gpu.alpha, np.ndarray)
    np.testing.assert_allclose(gpu.objective, cpu.objective, rtol=1e-4)
    np.testing.assert_allclose(gpu.rho, cpu.rho, atol=1e-3)


def test_device_rbf_rows_give_identical_rows_a_kernel_of_exactly_one():
    """The float32 GEMM leaves ||a||² + ||b||² − 2<a, b> of identical rows at rounding; the
    device recomputes those distances from the differences, as the CPU rows do."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (40, 30))
    X = np.vstack([X, X[:5]])
    spec = make_kernel("rbf", X, 8.0 / 30)
    out = np.empty((X.shape[0], X.shape[0]), dtype=np.float32)
    DeviceKernel(np, spec, X).rows_into(np.arange(X.shape[0]), out, np.arange(X.shape[0]))
    same = np.all(X[:, None, :] == X[None, :, :], axis=2)
    assert same.sum() == X.shape[0] + 10
    assert (out[same] == 1.0).all()
    np.testing.assert_allclose(out, kernel_block(spec, X, X), atol=1e-5)


def test_device_fit_with_identical_rows_of_opposite_labels_equals_the_cpu_fit_at_large_c(numpy_as_cuda):
    """Without the recomputed distances the device's Q block of such rows is not singular and
    its optimum is another problem's (as the CPU's was: 0.14 % from LIBSVM's objective)."""
    X, y = breast_cancer()
    X, y = np.vstack([X, X[:30]]), np.r_[y, 1 - y[:30]]
    model = svmkit.SVC(C=2.0**15, gamma=8.0 / X.shape[1])
    cpu = clone(model).fit(X, y)
    gpu = clone(model).set_params(options=CUDA).fit(X, y)
    np.testing.assert_allclose(gpu.objective_, cpu.objective_, rtol=1e-4)


@pytest.fixture
def small_device(monkeypatch):
    """A device of 100 kB where the device code runs on NumPy, and blocks of at most 2,000
    kernel values: breast_cancer's data (68 kB in float32) is streamed from the host, its row
    cache holds the 64 rows of the minimum, and each row request takes many column blocks."""
    monkeypatch.setattr(device, "NUMPY_DEVICE_BYTES", 100_000)
    monkeypatch.setattr(device, "BLOCK_VALUES", 2_000)


@pytest.mark.parametrize("name, params", KERNELS)
def test_streamed_device_rows_equal_the_rows_from_the_data_on_the_device(name, params, small_device):
    X, _ = breast_cancer()
    spec = make_kernel(name, X, params.get("gamma", "scale"), params.get("degree", 3), params.get("coef0", 0.0))
    streamed = DeviceKernel(np, spec, X)
    assert streamed.streamed and streamed._column_step(100) < X.shape[0] // 5
    idx = np.array([5, 400, 3, 568, 0])
    got = np.zeros((8, X.shape[0]), dtype=np.float32)
    streamed.rows_into(idx, got, np.array([7, 1, 2, 3, 4]))
    device.NUMPY_DEVICE_BYTES = np.inf
    whole = DeviceKernel(np, spec, X)
    assert not whole.streamed
    expected = np.zeros_like(got)
    whole.rows_into(idx, expected, np.array([7, 1, 2, 3, 4]))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 * np.abs(expected).max())
    assert not got[[0, 5, 6]].any()


@pytest.mark.parametrize("model", [svmkit.SVC(C=10.0, gamma=0.05), svmkit.SVR(C=3.0, epsilon=0.2),
                                   svmkit.NuSVC(nu=0.3, gamma=0.05)])
def test_a_fit_whose_data_exceeds_the_device_memory_streams_it_to_the_same_optimum(model, numpy_as_cuda,
                                                                                   small_device):
    """Streamed data and a row cache of the memory left: the optimum of the fit with the data on
    the device and a cache of every row, to the solver's tolerance (their paths differ: 32
    variables a step against one block)."""
    X, y = breast_cancer()
    with pytest.MonkeyPatch.context() as patch:
        sources = recorded_row_sources(patch)
        capped = clone(model).set_params(options=CUDA).fit(X, y)
    assert [s.capacity for s in sources] == [64] and sources[0].kernel.streamed
    device.NUMPY_DEVICE_BYTES = np.inf
    whole = clone(model).set_params(options=CUDA).fit(X, y)
    np.testing.assert_allclose(capped.objective_, whole.objective_, rtol=1e-4)
    assert_same_fit(capped, clone(model).fit(X, y), X)


@needs_cuda
def test_gpu_fit_whose_data_exceeds_the_memory_pool_limit_reaches_the_same_optimum():
    """CuPy's pool limited to 12 MB beyond what it holds: the 4 MB of data stream from pinned
    host memory and the row cache takes what is left."""
    import cupy

    rng = np.random.default_rng(0)
    X = rng.standard_normal((5000, 200))
    y = (X[:, :10].sum(axis=1) + 0.5 * rng.standard_normal(5000) > 0).astype(int)
    model = svmkit.SVC(C=1.0, options=CUDA)
    whole = clone(model).fit(X, y)
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    limit = pool.get_limit()
    pool.set_limit(size=pool.used_bytes() + 12 * 2**20)
    try:
        with pytest.MonkeyPatch.context() as patch:
            sources = recorded_row_sources(patch)
            capped = clone(model).fit(X, y)
    finally:
        pool.set_limit(size=limit)
    assert sources[0].kernel.streamed and sources[0].capacity < X.shape[0]
    np.testing.assert_allclose(capped.objective_, whole.objective_, rtol=1e-4)


def block_problem(nu_mode=False):
    """breast_cancer's C-SVC (C = 10) or ν-SVC (ν = 0.3) dual as one block: its float32 kernel,
    labels, bounds, p and the feasible start."""
    X, y = breast_cancer()
    y = np.where(y > 0, 1.0, -1.0)
    K = kernel_block(make_kernel("rbf", X, 0.05), X, X).astype(np.float32)
    if nu_mode:
        problem, alpha0 = nu_svc(y, np.ones(y.size), 0.3, np.arange(y.size))
    else:
        problem, alpha0 = c_svc(y, np.full(y.size, 10.0), np.arange(y.size))[0], np.zeros(y.size)
    return K, problem, alpha0


def block_gradient(K, problem, alpha):
    y = problem.y
    return y * (K.astype(np.float64) @ (y * alpha)) + problem.p


def test_a_newton_step_from_near_the_optimum_lands_on_it():
    """Q is quadratic: with the optimum's free set, one step from a feasible point near the
    optimum on that set reaches the optimum (to the float32 kernel's rounding)."""
    K, problem, _ = block_problem()
    best = solve(problem, row_source(matrix=K.astype(np.float64)), tol=1e-8)
    free = np.flatnonzero((best.alpha > 1e-6) & (best.alpha < problem.upper - 1e-6))
    assert free.size > 10
    rng = np.random.default_rng(0)
    v = rng.uniform(-1.0, 1.0, free.size)
    v -= problem.y[free] * (problem.y[free] @ v) / free.size  # yᵀv = 0
    alpha = best.alpha.copy()
    alpha[free] += 1e-3 * v * np.minimum(alpha[free], problem.upper[free] - alpha[free]).min() / np.abs(v).max()
    G = block_gradient(K, problem, alpha)
    assert _smo_cuda.newton_step(np, K, problem.y, alpha, G, problem.upper, False)
    np.testing.assert_allclose(alpha, best.alpha, atol=1e-6 * problem.upper.max())
    np.testing.assert_allclose(G, block_gradient(K, problem, alpha), atol=1e-9)


@pytest.mark.parametrize("nu_mode", [False, True])
def test_a_newton_step_keeps_the_constraints_and_lowers_the_objective(nu_mode):
    K, problem, alpha0 = block_problem(nu_mode)
    rng = np.random.default_rng(1)
    alpha = alpha0 if nu_mode else np.where(problem.y > 0, 1.0, problem.y[problem.y > 0].size / (problem.y < 0).sum())
    alpha = np.clip(alpha * rng.uniform(0.5, 1.5, alpha.size), 0.0, problem.upper)
    G = block_gradient(K, problem, alpha)
    before, sums = alpha @ (0.5 * (G + problem.p)), [alpha[problem.y > 0].sum(), alpha[problem.y < 0].sum()]
    assert _smo_cuda.newton_step(np, K, problem.y, alpha, G, problem.upper, nu_mode)
    assert alpha.min() >= 0.0 and (alpha <= problem.upper).all()
    if nu_mode:
        np.testing.assert_allclose([alpha[problem.y > 0].sum(), alpha[problem.y < 0].sum()], sums, rtol=1e-12)
    else:
        assert problem.y @ alpha == pytest.approx(sums[0] - sums[1], abs=1e-9)
    np.testing.assert_allclose(G, block_gradient(K, problem, alpha), atol=1e-8)
    assert alpha @ (0.5 * (G + problem.p)) < before


@pytest.mark.parametrize("nu_mode", [False, True])
def test_pair_updates_with_newton_steps_between_chunks_reach_the_optimum(nu_mode):
    """The device's inner loop (`alternate`) driving the host's pair updates in chunks of 50
    with `newton_step` between them: the optimum of the solver, with fewer pair updates."""
    K, problem, alpha0 = block_problem(nu_mode)
    n = problem.n
    store, pos, kidx = K, np.arange(n), np.arange(n)
    QD = np.diag(K).astype(np.float64)
    stop = np.zeros(1, dtype=np.bool_)

    def run(every):
        alpha, G = alpha0.copy(), block_gradient(K, problem, alpha0)
        steps = []

        def pairs(cap):
            return _smo_loops.inner_smo(Block(store, pos, kidx, problem.y, alpha, G, problem.upper, QD),
                                        InnerSettings(1e-3, cap, nu_mode, False, 1e12, stop))

        def newton():
            steps.append(_smo_cuda.newton_step(np, K, problem.y, alpha, G, problem.upper, nu_mode))
            return steps[-1]

        updates = _smo_cuda.alternate(pairs, newton, 10**7, every)
        return alpha @ (0.5 * (G + problem.p)), updates, steps

    objective, updates, steps = run(50)
    reference, reference_updates, _ = run(0)
    assert any(steps) and updates < reference_updates
    np.testing.assert_allclose(objective, reference, rtol=1e-4)
    np.testing.assert_allclose(objective, solve(problem, row_source(matrix=K.astype(np.float64)),
                                                alpha0=alpha0).objective, rtol=1e-4)
