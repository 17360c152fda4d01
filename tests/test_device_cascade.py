"""The cascade with device='cuda': each worker's solves read kernel rows cached on its device
and its checks form their kernel products there, and the fit reaches the CPU's optimum. Run
on two in-process workers with the device code served by NumPy (`numpy_as_cuda`), and on the
GPU where one is present."""

import threading

import numpy as np
import pytest
from sklearn.base import clone

import svmkit
from conftest import breast_cancer, iris
from svmkit import backend
from svmkit.kernels.device import DeviceKernel
from test_gpu import CUDA, needs_cuda

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture
def two_workers():
    """Two workers in this process (one thread each), so that the test's patches reach them."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def recorded_work(monkeypatch) -> dict:
    """The worker threads that made device row sources and device check products, from now on."""
    seen = {"rows": set(), "products": set()}
    rows, products = backend.WorkerDevice.rows, backend.WorkerDevice.products

    def recorded_rows(self, kernel, Xk, cache_mb):
        out = rows(self, kernel, Xk, cache_mb)
        assert isinstance(out.kernel, DeviceKernel), "a worker's solve read rows that are not the device's"
        seen["rows"].add(threading.get_ident())
        return out

    def recorded_products(self, centres, X, coef):
        seen["products"].add(threading.get_ident())
        return products(self, centres, X, coef)

    monkeypatch.setattr(backend.WorkerDevice, "rows", recorded_rows)
    monkeypatch.setattr(backend.WorkerDevice, "products", recorded_products)
    return seen


def on_dask(X, y, rows):
    return da.from_array(np.asarray(X, dtype=np.float64), chunks=(rows, -1)), da.from_array(np.asarray(y), chunks=rows)


@pytest.mark.parametrize("data, est", [(breast_cancer, svmkit.SVC(C=10.0)), (iris, svmkit.SVC(C=10.0, kernel="poly", degree=2))],
                         ids=["binary", "multiclass-poly"])
def test_a_cascade_on_device_workers_solves_and_checks_there_and_reaches_the_cpu_optimum(
        data, est, numpy_as_cuda, two_workers, monkeypatch):
    X, y = data()
    seen = recorded_work(monkeypatch)
    on_device = clone(est).set_params(options=CUDA).fit(*on_dask(X, y, rows=60))
    assert len(seen["rows"]) == 2 and len(seen["products"]) == 2, "not every worker ran on its device"
    in_memory = clone(est).fit(X, y)
    np.testing.assert_allclose(on_device.objective_, in_memory.objective_, rtol=1e-4)
    assert on_device.fit_status_ == 0 and on_device.cascade_history_[-1]["violating"] == 0
    np.testing.assert_array_equal(on_device.predict(X), in_memory.predict(X))


def test_a_cpu_cascade_makes_no_device_work(two_workers, monkeypatch):
    X, y = breast_cancer()
    seen = recorded_work(monkeypatch)
    svmkit.SVC(C=10.0).fit(*on_dask(X, y, rows=100))
    assert seen == {"rows": set(), "products": set()}


@needs_cuda
def test_gpu_cascade_reaches_the_cpu_optimum(two_workers):
    X, y = breast_cancer()
    est = svmkit.SVC(C=10.0)
    on_gpu = clone(est).set_params(options=CUDA).fit(*on_dask(X, y, rows=60))
    on_cpu = clone(est).fit(*on_dask(X, y, rows=60))
    np.testing.assert_allclose(on_gpu.objective_, on_cpu.objective_, rtol=1e-5)
    np.testing.assert_array_equal(on_gpu.predict(X), on_cpu.predict(X))
