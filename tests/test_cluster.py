"""Fits on a Dask cluster (2 worker processes, one thread each): the cascade SVC and SVR reach
the in-memory optimum, the linear models' primal Newton and the Nyström fits reach the in-memory
solution over row blocks, predictions of Dask input are lazy and equal the in-memory ones, a
worker killed mid-fit changes nothing, the client never holds X, and bad input is named
before any work."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_svmlight_file

import svmkit
from conftest import breast_cancer, diabetes, iris

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

DATA = "/work/shared/data"


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def on_dask(X, y=None, rows=100):
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    Xd = da.from_array(X, chunks=(rows, -1))
    return Xd if y is None else (Xd, da.from_array(np.asarray(y), chunks=rows))


def assert_same_optimum(in_memory, cascade, rtol=1e-3):
    np.testing.assert_allclose(cascade.objective_, in_memory.objective_, rtol=rtol)


@pytest.mark.parametrize("data, est", [(breast_cancer, svmkit.SVC(C=10.0)), (iris, svmkit.SVC(C=10.0)),
                                       (breast_cancer, svmkit.SVC(C=1.0, kernel="poly", degree=2, class_weight="balanced"))],
                         ids=["binary", "multiclass", "poly-balanced"])
def test_cascade_svc_reaches_the_in_memory_objective(client, data, est):
    X, y = data()
    a = clone(est).fit(X, y)
    b = clone(est).fit(*on_dask(X, y, rows=60))
    assert_same_optimum(a, b)
    assert b.fit_status_ == 0 and b.cascade_history_[-1]["violating"] == 0
    assert set(b.support_) == set(a.support_)
    np.testing.assert_allclose(b.intercept_, a.intercept_, atol=2e-3)
    np.testing.assert_array_equal(b.predict(X), a.predict(X))


def test_cascade_svr_reaches_the_in_memory_objective(client):
    X, y = diabetes()
    est = svmkit.SVR(C=10.0, epsilon=0.1)
    a = clone(est).fit(X, y / 100)
    b = clone(est).fit(*on_dask(X, y / 100, rows=80))
    assert_same_optimum(a, b)
    assert b.cascade_rounds_[0] >= 1
    np.testing.assert_allclose(b.predict(X), a.predict(X), atol=5e-3)


def test_cascade_by_kernel_kmeans_partitions_reaches_the_same_objective(client):
    X, y = breast_cancer()
    a = svmkit.SVC(C=10.0).fit(X, y)
    kmeans = svmkit.Options(partitioning="kmeans")
    b = svmkit.SVC(C=10.0, options=kmeans, random_state=0).fit(*on_dask(X, y, rows=100))
    assert_same_optimum(a, b)
    assert any(label == "kmeans split" for label, _ in b.cascade_timings_)


def test_max_rounds_zero_gives_the_trees_root_an_early_model(client):
    X, y = breast_cancer()
    a = svmkit.SVC(C=10.0).fit(X, y)
    early = svmkit.SVC(C=10.0, options=svmkit.Options(max_rounds=0)).fit(*on_dask(X, y, rows=60))
    assert early.fit_status_ == 1 and early.cascade_rounds_[0] == 0
    # the root's optimum is over fewer variables: never below the global one
    assert early.objective_[0] >= a.objective_[0] - 1e-9 * abs(a.objective_[0])
    assert np.mean(early.predict(X) == y) > 0.95


def _labels(est):
    return [label for label, _ in est.cascade_timings_]


def test_a_cascade_stopped_after_its_rounds_submits_no_further_check_and_a_warm_refit_ends_at_the_optimum(client):
    X, y = breast_cancer()
    Xd, yd = on_dask(X, y, rows=60)
    est = svmkit.SVC(C=10.0, warm_start=True, options=svmkit.Options(max_rounds=1)).fit(Xd, yd)
    assert est.fit_status_ == 1 and est.cascade_rounds_[0] == 1
    assert [label for label in _labels(est) if label.startswith("check")] == ["check 1"] * len(Xd.chunks[0])
    est.set_params(options=svmkit.Options()).fit(Xd, yd)
    assert est.fit_status_ == 0 and "start" in _labels(est)
    np.testing.assert_allclose(est.objective_, svmkit.SVC(C=10.0).fit(X, y).objective_, rtol=1e-5)


def shuffled_iris():
    """iris in an order that gives each partition every class (its rows are sorted by class)."""
    X, y = iris()
    order = np.random.default_rng(0).permutation(y.size)
    return X[order], y[order]


@pytest.mark.parametrize("data, est, rows", [(breast_cancer, svmkit.SVC(C=10.0), 60),
                                             (shuffled_iris, svmkit.SVC(C=10.0), 50),
                                             (diabetes, svmkit.SVR(C=10.0, epsilon=0.1), 80)],
                         ids=["binary", "multiclass", "svr"])
def test_a_loaded_model_of_a_cascade_stopped_early_continues_from_its_support_to_the_optimum(client, data, est, rows,
                                                                                           tmp_path):
    X, y = data()
    Xd, yd = on_dask(X, y, rows=rows)
    cold = clone(est).fit(Xd, yd)
    early = clone(est).set_params(options=svmkit.Options(max_rounds=0)).fit(Xd, yd)
    svmkit.save(early, tmp_path / "early.svmkit")
    resumed = svmkit.load(tmp_path / "early.svmkit").set_params(warm_start=True, options=svmkit.Options())
    resumed.fit(Xd, yd)
    # the start's solve in place of the tree: no leaf, no merge
    assert "start" in _labels(resumed) and not any(label.startswith(("leaf", "merge")) for label in _labels(resumed))
    assert resumed.fit_status_ == 0 and resumed.cascade_history_[-1]["violating"] == 0
    np.testing.assert_allclose(resumed.objective_, cold.objective_, rtol=1e-5)
    np.testing.assert_allclose(resumed.objective_, clone(est).fit(X, y).objective_, rtol=1e-5)


def test_a_warm_start_on_a_larger_c_scales_the_support_and_reaches_that_cs_optimum(client):
    X, y = breast_cancer()
    Xd, yd = on_dask(X, y, rows=60)
    est = svmkit.SVC(C=1.0, warm_start=True).fit(Xd, yd)
    est.set_params(C=4.0).fit(Xd, yd)
    assert "start" in _labels(est) and not any(label.startswith("leaf") for label in _labels(est))
    np.testing.assert_allclose(est.objective_, svmkit.SVC(C=4.0).fit(X, y).objective_, rtol=1e-5)


def test_a_loaded_model_warm_started_at_a_smaller_c_scales_its_bounded_support_into_the_new_box(client, tmp_path):
    X, y = breast_cancer()
    Xd, yd = on_dask(X, y, rows=60)
    fitted = svmkit.SVC(C=4.0).fit(Xd, yd)
    assert fitted.bounded_support_.size  # unscaled, their α = 4 would pass the new bound 1
    svmkit.save(fitted, tmp_path / "c4.svmkit")
    est = svmkit.load(tmp_path / "c4.svmkit").set_params(C=1.0, warm_start=True).fit(Xd, yd)
    assert "start" in _labels(est)
    np.testing.assert_allclose(est.objective_, svmkit.SVC(C=1.0).fit(X, y).objective_, rtol=1e-5)


def test_a_warm_start_on_changed_labels_is_refused_by_the_partitions_and_the_tree_runs(client):
    X, y = breast_cancer()
    est = svmkit.SVC(C=10.0, warm_start=True).fit(*on_dask(X, y, rows=60))
    flipped = y.copy()
    flipped[est.support_[:5]] = 1 - flipped[est.support_[:5]]
    est.fit(*on_dask(X, flipped, rows=60))
    assert "start" not in _labels(est) and any(label.startswith("leaf") for label in _labels(est))
    np.testing.assert_allclose(est.objective_, svmkit.SVC(C=10.0).fit(X, flipped).objective_, rtol=1e-5)


def test_regression_set_abalone_cascade_svr(client):
    X, y = load_svmlight_file(f"{DATA}/abalone_scale")
    est = svmkit.SVR(C=1.0, epsilon=0.5)
    a = clone(est).fit(X, y)
    b = clone(est).fit(*on_dask(X, y, rows=1100))
    assert_same_optimum(a, b)


def _libsvm_80(name):
    X, y = load_svmlight_file(f"{DATA}/{name}")
    n = int(0.8 * X.shape[0]) if name == "w8a" else X.shape[0]
    return X[:n], y[:n]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["a9a", "w8a"])
def test_cascade_svc_on_a9a_and_w8a_reaches_the_in_memory_objective(client, name):
    X, y = _libsvm_80(name)
    a = svmkit.SVC(C=1.0).fit(X, y)
    b = svmkit.SVC(C=1.0).fit(*on_dask(X, y, rows=-(-X.shape[0] // 4)))
    assert_same_optimum(a, b)


@pytest.mark.parametrize("est, data", [
    (svmkit.LinearSVC(dual=False, C=1.0), breast_cancer),
    (svmkit.LinearSVC(dual=False, C=0.5, class_weight="balanced"), iris),
    (svmkit.LinearSVR(dual=False, loss="squared_epsilon_insensitive", C=0.1, epsilon=0.1), diabetes)],
    ids=["svc-binary", "svc-ovr", "svr"])
def test_linear_primal_newton_over_blocks_reaches_the_in_memory_objective(client, est, data):
    X, y = data()
    a = clone(est).fit(X, y)
    b = clone(est).fit(*on_dask(X, y, rows=90))
    np.testing.assert_allclose(np.asarray(b.objective_)[..., 0], np.asarray(a.objective_)[..., 0], rtol=1e-6)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-5, atol=1e-8)
    assert b.n_iter_ == a.n_iter_


@pytest.mark.parametrize("est, data", [
    (svmkit.KernelLogisticRegression(C=10.0, solver="nystrom", n_components=80, random_state=0, tol=1e-10), breast_cancer),
    (svmkit.KernelLogisticRegression(C=10.0, solver="nystrom", n_components=40, random_state=0, tol=1e-10), iris),
    (svmkit.LSSVC(C=10.0, solver="nystrom", n_components=80, random_state=1), iris),
    (svmkit.LSSVR(C=10.0, solver="nystrom", n_components=80, random_state=2), diabetes)],
    ids=["klr-binary", "klr-multinomial", "lssvc", "lssvr"])
def test_nystrom_fits_over_blocks_equal_the_in_memory_fit(client, est, data):
    X, y = data()
    a = clone(est).fit(X, y)
    b = clone(est).fit(*on_dask(X, y, rows=70))
    np.testing.assert_array_equal(b.support_, a.support_)
    scale = np.abs(a.decision_function(X) if hasattr(a, "decision_function") else a.predict(X)).max()
    got = b.decision_function(X) if hasattr(b, "decision_function") else b.predict(X)
    want = a.decision_function(X) if hasattr(a, "decision_function") else a.predict(X)
    np.testing.assert_allclose(got, want, atol=1e-6 * scale)
    if hasattr(a, "objective_"):
        np.testing.assert_allclose(b.objective_, a.objective_, rtol=1e-9)


ESTIMATORS = [(svmkit.SVC(probability=True, random_state=0), iris), (svmkit.NuSVC(), iris), (svmkit.SVR(), diabetes),
              (svmkit.NuSVR(), diabetes), (svmkit.OneClassSVM(), breast_cancer), (svmkit.KernelRidge(kernel="rbf"), diabetes),
              (svmkit.LSSVC(), iris), (svmkit.LSSVR(), diabetes), (svmkit.KernelLogisticRegression(), iris),
              (svmkit.LinearSVC(), iris), (svmkit.LinearSVR(), diabetes)]


@pytest.mark.parametrize("est, data", ESTIMATORS, ids=[type(e).__name__ for e, _ in ESTIMATORS])
def test_predictions_of_dask_input_are_lazy_and_equal_the_in_memory_ones(client, est, data):
    X, y = data()
    fitted = clone(est).fit(X, y)
    Xd = on_dask(X, rows=64)
    for name in ("predict", "decision_function", "predict_proba", "predict_log_proba", "score_samples"):
        if not hasattr(fitted, name):
            continue
        lazy = getattr(fitted, name)(Xd)
        assert isinstance(lazy, da.Array), name
        np.testing.assert_allclose(lazy.compute(), getattr(fitted, name)(X), rtol=1e-12, atol=1e-12, err_msg=name)
    if hasattr(fitted, "score"):
        score = fitted.score(Xd, da.from_array(y, chunks=64))
        assert isinstance(score, da.Array)
        np.testing.assert_allclose(score.compute(), fitted.score(X, y), rtol=1e-10)


def test_a_model_that_fits_in_memory_only_refuses_dask_input_naming_those_that_fit_it(client):
    X, y = iris()
    with pytest.raises(ValueError, match="NuSVC fits data in memory only.*SVC and SVR"):
        svmkit.NuSVC().fit(*on_dask(X, y))


@pytest.mark.parametrize("est, message", [
    (svmkit.SVC(options=svmkit.Options(max_rounds=-1)), "max_rounds must be None or an integer"),
    (svmkit.SVR(options=svmkit.Options(partitioning="random")), "partitioning must be one of"),
    (svmkit.SVC(options=svmkit.Options(scheduler_address=8786)),
     "scheduler_address must be None or a Dask scheduler's address"),
    (svmkit.LSSVC(options=svmkit.Options(scheduler_address=8786)), "scheduler_address must be None"),
    (svmkit.LinearSVC(options=svmkit.Options(scheduler_address=8786)), "scheduler_address")])
def test_the_cluster_parameters_are_checked_at_every_fit(est, message):
    X, y = iris()
    with pytest.raises(ValueError, match=message):
        est.fit(X, y)


def test_unknown_chunk_sizes_are_refused_before_any_work(client):
    X, y = iris()
    Xd, yd = on_dask(X, y)
    unknown = Xd[Xd[:, 0] > 0]
    with pytest.raises(ValueError, match="unknown chunk sizes.*compute_chunk_sizes"):
        svmkit.SVC().fit(unknown, yd)


def test_x_and_y_partitioned_differently_are_refused_naming_both(client):
    X, y = iris()
    with pytest.raises(ValueError, match="partitioned differently.*X's partitions hold \\(50, 50, 50\\)"):
        svmkit.SVC().fit(da.from_array(X, chunks=(50, -1)), da.from_array(y, chunks=40))
    with pytest.raises(ValueError, match="y has 149 rows, X has 150"):
        svmkit.LinearSVC(dual=False).fit(da.from_array(X, chunks=(50, -1)), da.from_array(y[:149], chunks=50))


def test_an_unreachable_scheduler_fails_fast_with_its_address():
    X, y = iris()
    started = time.perf_counter()
    with pytest.raises(ConnectionError, match="127.0.0.1:1"):
        svmkit.SVC(options=svmkit.Options(scheduler_address="tcp://127.0.0.1:1")).fit(*on_dask(X, y))
    assert time.perf_counter() - started < 30


def _kill_a_worker_after(monkeypatch, client, at_round):
    """Make the cascade kill one worker's process (SIGKILL) when round `at_round` is done (0:
    the tree; later, the partitions' checks kept on the workers are lost with it)."""
    from svmkit.models.smo import on_cluster

    pids = list(client.run(os.getpid).values())
    original = on_cluster.cascade
    killed = []

    def cascade(*args, **kwargs):
        on_round = args[6]

        def kill_then_report(k, problem, info):
            if k == at_round and not killed:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            on_round(k, problem, info)

        return original(*args[:6], kill_then_report, **kwargs)

    monkeypatch.setattr(on_cluster, "cascade", cascade)
    return killed


@pytest.mark.parametrize("at_round", [0, 1], ids=["after-the-tree", "after-a-round"])
def test_a_worker_killed_mid_cascade_leaves_the_same_objective(monkeypatch, at_round):
    X, y = breast_cancer()
    undisturbed = None
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        undisturbed = svmkit.SVC(C=10.0).fit(*on_dask(X, y, rows=60))
        assert undisturbed.cascade_rounds_[0] > at_round
        killed = _kill_a_worker_after(monkeypatch, c, at_round)
        after = svmkit.SVC(C=10.0).fit(*on_dask(X, y, rows=60))
    assert killed
    np.testing.assert_allclose(after.objective_, undisturbed.objective_, rtol=1e-12)
    assert_same_optimum(svmkit.SVC(C=10.0).fit(X, y), after)


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _separable(block, seed):
    """Rows of two classes 4 apart along the first axis (few support vectors)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=block.shape)
    X[:, 0] += np.where(X[:, 0] > 0, 2.0, -2.0)
    return X


@pytest.mark.slow
def test_the_client_never_holds_x(client):
    n, d, rows = 400_000, 50, 50_000
    seeds = da.arange(n // rows, chunks=1)
    X = da.map_blocks(lambda s: _separable(np.empty((rows, d)), int(s[0])), seeds, chunks=((rows,) * (n // rows), (d,)),
                      new_axis=1, dtype=np.float64)
    y = X[:, 0].map_blocks(lambda c: np.where(c > 0, 1, -1), dtype=np.int64)
    x_bytes = n * d * 8
    before = _rss()
    peak = [before]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        svc = svmkit.SVC(C=1.0, cache_size=100).fit(X, y)
        klr = svmkit.KernelLogisticRegression(solver="nystrom", n_components=100, random_state=0).fit(X, y)
    finally:
        stop.set()
        watcher.join()
    assert peak[0] - before < x_bytes / 2, (peak[0] - before) / 2**20
    assert svc.fit_status_ == 0
    sample = X[:2000].compute()
    assert np.mean(svc.predict(sample) == np.where(sample[:, 0] > 0, 1, -1)) == 1.0
    assert np.mean(klr.predict(sample) == np.where(sample[:, 0] > 0, 1, -1)) > 0.99


def on_dask_frames(X, y, rows):
    """X as a Dask dataframe (named columns) and y as a Dask series, both in partitions of `rows`."""
    import dask.dataframe
    import pandas

    frame = pandas.DataFrame(np.asarray(X, dtype=np.float64), columns=[f"f{j}" for j in range(X.shape[1])])
    return (dask.dataframe.from_pandas(frame, chunksize=rows, sort=False),
            dask.dataframe.from_pandas(pandas.Series(np.asarray(y), name="y"), chunksize=rows, sort=False))


FRAME_FITS = [(svmkit.SVC(C=10.0), breast_cancer), (svmkit.SVR(C=10.0), diabetes),
              (svmkit.LinearSVC(dual=False), breast_cancer), (svmkit.KernelRidge(kernel="rbf", solver="nystrom"), diabetes)]


@pytest.mark.parametrize("est, data", FRAME_FITS, ids=[type(e).__name__ for e, _ in FRAME_FITS])
def test_a_dask_dataframe_and_series_fit_as_the_same_dask_array_does(client, est, data):
    """X as a Dask dataframe and y as a Dask series give the fit of their Dask arrays, and
    predictions of a dataframe are lazy and equal the in-memory ones."""
    pytest.importorskip("dask.dataframe")
    X, y = data()
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    y = y / 100 if data is diabetes else y
    Xf, yf = on_dask_frames(X, y, rows=100)
    from_frames = clone(est).fit(Xf, yf)
    from_arrays = clone(est).fit(*on_dask(X, y, rows=100))
    for name in ("dual_coef_", "coef_", "intercept_", "support_"):
        if hasattr(from_arrays, name):
            np.testing.assert_array_equal(getattr(from_frames, name), getattr(from_arrays, name), err_msg=name)
    lazy = from_frames.predict(Xf)
    assert isinstance(lazy, da.Array)
    np.testing.assert_allclose(lazy.compute(), from_frames.predict(X), rtol=1e-12, atol=1e-12)


THREADS_AFTER = """
import os, sys
import numpy as np
import svmkit
from svmkit import _threads
if sys.argv[1] == "dask":
    import dask.array as da
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    svmkit.SVC().fit(da.from_array(X, chunks=(60, -1)), da.from_array(y, chunks=60))
blas = [lib["num_threads"] for lib in _threads.blas_libraries().info() if lib["user_api"] == "blas"]
print(_threads.compiled_thread_count(), max(blas), os.environ.get("OMP_NUM_THREADS"))
"""


def test_a_cluster_started_for_a_fit_leaves_the_process_threads_as_they_were():
    # Dask's nanny sets OMP_NUM_THREADS=1 in the process that starts its workers; fresh
    # processes, since this one has loaded the core already
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    runs = [subprocess.run([sys.executable, "-c", THREADS_AFTER, kind], capture_output=True, text=True, timeout=300,
                           env=env) for kind in ("dask", "alone")]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-2000:] + runs[1].stderr[-2000:]
    after_dask, alone = (r.stdout.split() for r in runs)
    assert after_dask == alone and alone[2] == "None"
