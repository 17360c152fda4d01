"""Precomputed and callable kernels under device='cuda': the device code run through NumPy (the
array API CuPy implements) against the CPU fits of every SMO model and of the closed-form
models, and, where a CUDA device is present, the GPU fits against the CPU's."""

import types

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

import svmkit
from conftest import diabetes, heart_scale, iris
from svmkit.kernels import device
from svmkit.kernels.kinds import OnDevice
from svmkit.solvers.smo import row_source
from svmkit.solvers.smo.row_source import FullRows
from test_gpu import CUDA, assert_updates_equal_device_refits, needs_cuda, recorded_row_sources

GAMMA = 0.05


def linear(A, B):
    """A callable kernel that computes on the arrays it is handed (NumPy's or CuPy's)."""
    return A @ B.T


#: The SMO models, each with the data it is fitted on.
SMO = {
    "svc": (svmkit.SVC(C=10.0, tol=1e-8), "heart"),
    "svc-ovo": (svmkit.SVC(C=10.0, tol=1e-8), "iris"),
    "svc-probability": (svmkit.SVC(C=10.0, tol=1e-8, probability=True, random_state=0), "iris"),
    "nusvc": (svmkit.NuSVC(nu=0.3, tol=1e-8), "heart"),
    "svr": (svmkit.SVR(C=3.0, epsilon=0.1, tol=1e-8), "diabetes"),
    "nusvr": (svmkit.NuSVR(nu=0.3, C=3.0, tol=1e-8), "diabetes"),
    "one-class": (svmkit.OneClassSVM(nu=0.2, tol=1e-8), "heart"),
    "quantile": (svmkit.KernelQuantileRegressor(quantile=0.3, C=3.0, tol=1e-8), "diabetes"),
}
#: The closed-form models and KLR (their device solvers), each with its data.
CLOSED = {
    "ridge": (svmkit.KernelRidge(alpha=1e-2), "diabetes"),
    "ridge-eigen-loo": (svmkit.KernelRidge(alpha=1e-2, solver="eigen", loo=True), "diabetes"),
    "lssvr-loo": (svmkit.LSSVR(C=10.0, loo=True), "diabetes"),
    "lssvc-ovo": (svmkit.LSSVC(C=10.0, multi_class="ovo"), "iris"),
    "klr": (svmkit.KernelLogisticRegression(C=10.0, random_state=0), "iris"),
}


def data(name):
    """(X dense, y) of a data set, first 200 rows of diabetes."""
    if name == "heart":
        X, y = heart_scale()
        return X.toarray(), y
    if name == "iris":
        return iris()
    X, y = diabetes()
    return X[:200], y[:200]


def poly(A, B):
    """(γ<a, b> + 1)², γ = GAMMA, by array operators only: NumPy's and CuPy's arrays alike."""
    return (GAMMA * (A @ B.T) + 1.0) ** 2


def as_kernel(model, kind):
    """`model` with the kernel `poly` given as `kind`: 'precomputed', a callable ('callable') or
    a callable wrapped in OnDevice ('on-device')."""
    kernel = {"precomputed": "precomputed", "callable": poly, "on-device": OnDevice(poly)}[kind]
    return clone(model).set_params(kernel=kernel)


def inputs(kind, X, test):
    """(fit input, predict input): the kernel matrices for 'precomputed', else the data."""
    return (poly(X, X), poly(test, X)) if kind == "precomputed" else (X, test)


def outputs(model, X):
    """What a fitted model gives on X besides its classes: decision values, probabilities (KLR),
    the prediction of a regressor."""
    names = ["decision_function", "predict_proba"] + ([] if is_classifier(model) else ["predict"])
    return [getattr(model, name)(X) for name in names if hasattr(model, name)]


def assert_same(gpu, cpu, X, rtol=1e-6):
    """α (β), b, the objective and every output within `rtol` of the CPU's, relative to their
    largest; the classes predicted equal."""
    def close(a, b):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(np.abs(b).max(initial=0.0), 1e-12))

    close(gpu.dual_coef_, cpu.dual_coef_)
    close(gpu.intercept_, cpu.intercept_)
    if hasattr(cpu, "objective_"):
        close(gpu.objective_, cpu.objective_)
    for g, c in zip(outputs(gpu, X), outputs(cpu, X)):
        close(g, c)
    if is_classifier(cpu):
        np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))


def fit_both(model, data_name, kind):
    """(device fit, CPU fit, predict input) of `model` on the data set `data_name`, with the
    kernel `poly` given as `kind`."""
    X, y = data(data_name)
    fit_X, test_X = inputs(kind, X, X[::3])
    cpu = as_kernel(model, kind).fit(fit_X, y)
    gpu = as_kernel(model, kind).set_params(options=CUDA).fit(fit_X, y)
    return gpu, cpu, test_X


KINDS = ["precomputed", "callable", "on-device"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(SMO))
def test_smo_fits_of_given_and_called_kernels_on_the_device_equal_the_cpu_fits(name, kind, numpy_as_cuda):
    assert_same(*fit_both(*SMO[name], kind))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(CLOSED))
def test_closed_form_fits_of_given_and_called_kernels_on_the_device_equal_the_cpu_fits(name, kind, numpy_as_cuda,
                                                                                      device_linear_algebra):
    assert_same(*fit_both(*CLOSED[name], kind))


@pytest.mark.parametrize("kind", ["callable", "on-device"])
def test_updates_of_a_called_kernel_on_the_device_equal_a_refit_there(kind, numpy_as_cuda):
    X, y = data("heart")
    assert_updates_equal_device_refits(as_kernel(svmkit.SVC(C=10.0, tol=1e-8), kind), X, y)


def test_a_precomputed_kernel_is_placed_once_in_float32_and_its_rows_read_there(numpy_as_cuda, monkeypatch):
    sources = recorded_row_sources(monkeypatch)
    computed = []
    monkeypatch.setattr(device.DeviceKernel, "rows_into", lambda *a: computed.append(1))
    fit_both(*SMO["svc-ovo"], "precomputed")
    assert [type(s) for s in sources] == [FullRows, FullRows]  # the CPU's, then the device's
    assert sources[1].store.dtype == np.float32 and sources[1].store.shape == (150, 150)
    assert computed == []


def test_a_matrix_is_sent_to_a_device_by_blocks_of_rows_rounded_on_the_host(monkeypatch):
    monkeypatch.setattr(row_source, "PLACE_BYTES", 4 * 150 * 16)
    sent = []
    xp = types.SimpleNamespace(empty=np.empty, asarray=lambda a: sent.append(a.dtype) or np.asarray(a))
    X, _ = data("iris")
    K = poly(X, X)
    np.testing.assert_array_equal(row_source.placed_float32(xp, K), K.astype(np.float32))
    assert sent == [np.float32] * 10


def test_a_precomputed_kernel_too_large_for_the_device_streams_its_rows_to_the_same_fit(numpy_as_cuda, monkeypatch):
    """A matrix over DATA_SHARE of the memory left stays on the host; its rows are copied into
    the device's row cache, over each class pair's own columns."""
    monkeypatch.setattr(device, "NUMPY_DEVICE_BYTES", 4 * 150 * 150)
    copied = []
    real = device.DeviceMatrix.rows_into
    monkeypatch.setattr(device.DeviceMatrix, "rows_into", lambda self, *a: copied.append(self.n) or real(self, *a))
    assert_same(*fit_both(*SMO["svc-ovo"], "precomputed"))
    assert set(copied) == {100}


def test_prediction_with_a_precomputed_test_kernel_is_formed_through_the_device(numpy_as_cuda, monkeypatch):
    calls = []
    real = device.DeviceArrays.given_products
    monkeypatch.setattr(device.DeviceArrays, "given_products", lambda *a: calls.append(1) or real(*a))
    gpu, cpu, test = fit_both(*SMO["svc"], "precomputed")
    calls.clear()
    np.testing.assert_allclose(gpu.decision_function(test), cpu.decision_function(test), rtol=1e-12, atol=1e-12)
    assert calls
    monkeypatch.setattr(device, "_PREDICT_VALUES", 1000)  # blocks of 1000 // n_SV rows
    np.testing.assert_allclose(gpu.decision_function(test), cpu.decision_function(test), rtol=1e-12, atol=1e-12)


def test_a_callable_is_handed_host_data_unless_wrapped_in_on_device(numpy_as_cuda, device_linear_algebra,
                                                                    monkeypatch):
    """A bare callable is handed the training data on the host; wrapped in OnDevice, the data
    placed on the device (dense float64, `device_rows`) once per fit."""
    X, y = heart_scale()
    placed, handed = [], []
    real = device.device_rows
    monkeypatch.setattr(device, "device_rows", lambda *a, **k: placed.append(real(*a, **k)[0]) or (placed[-1], None))

    def kernel(A, B):
        handed.append(B)
        return linear(A, B)

    for model in (svmkit.SVC(kernel=kernel, options=CUDA), svmkit.LSSVC(kernel=kernel, options=CUDA)):
        model.fit(X, y)
    assert handed and placed == []
    for model in (svmkit.SVC(kernel=OnDevice(kernel), options=CUDA),
                  svmkit.LSSVC(kernel=OnDevice(kernel), options=CUDA)):
        placed.clear()
        handed.clear()
        model.fit(X, y)
        assert len(placed) == 1 and placed[0].dtype == np.float64 and placed[0].shape == (270, 13)
        assert any(B is placed[0] for B in handed)


def test_a_callable_on_device_needs_numbers(numpy_as_cuda):
    rows = [[1.0, 2.0], [3.0, 4.0], [5.0, 0.0], [1.0, 1.0]]
    strings = ["ab", "abc", "b", "ba"]

    def overlap(A, B):
        return np.array([[float(len(set(a) & set(b))) for b in B] for a in A])

    svmkit.SVC(kernel=OnDevice(linear), options=CUDA).fit(np.array(rows), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="OnDevice"):
        svmkit.SVC(kernel=OnDevice(overlap), options=CUDA).fit(strings, [0, 1, 0, 1])
    svmkit.SVC(kernel=overlap, options=CUDA).fit(strings, [0, 1, 0, 1])


def test_on_device_is_a_kernel_parameter_like_any_callable():
    X, y = data("heart")
    wrapped = svmkit.SVC(kernel=OnDevice(linear)).fit(X, y)
    bare = svmkit.SVC(kernel=linear).fit(X, y)
    np.testing.assert_array_equal(wrapped.dual_coef_, bare.dual_coef_)
    assert clone(wrapped).kernel == OnDevice(linear)
    assert svmkit.OnDevice is OnDevice


@needs_cuda
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(SMO))
def test_gpu_smo_fits_of_given_and_called_kernels_equal_the_cpu_fits(name, kind):
    """On the device the solver's blocks take other paths to the optimum than the host's pair
    updates: at tol=1e-8, α, b, the objective and the decision values to 1e-4."""
    assert_same(*fit_both(*SMO[name], kind), rtol=1e-4)


@needs_cuda
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(CLOSED))
def test_gpu_closed_form_fits_of_given_and_called_kernels_equal_the_cpu_fits(name, kind):
    assert_same(*fit_both(*CLOSED[name], kind), rtol=1e-5)


@needs_cuda
def test_gpu_precomputed_kernel_is_kept_on_the_device(monkeypatch):
    import cupy

    sources = recorded_row_sources(monkeypatch)
    fit_both(*SMO["svc"], "precomputed")
    assert [type(s) for s in sources] == [FullRows, FullRows]  # the CPU's, then the device's
    assert isinstance(sources[1].store, cupy.ndarray) and sources[1].store.dtype == np.float32


def test_on_device_takes_a_kernel_function_only():
    with pytest.raises(TypeError, match="OnDevice wraps a kernel function func\\(A, B\\), got 3"):
        OnDevice(3)
