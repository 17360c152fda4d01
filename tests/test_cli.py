"""The `svmkit` command run as a subprocess, against libsvm-official given the same options."""

import subprocess
import sys

import numpy as np
import pytest

from conftest import DATA, libsvm_predict
from svmkit.io.native import FORMAT_VERSION, MAGIC

HEART = str(DATA / "heart_scale")
HOUSING = str(DATA / "housing_scale")


def svmkit_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "svmkit.cli.main", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd)


def _libsvm(options, data, tmp_path):
    from libsvm.svmutil import svm_problem, svm_read_problem, svm_save_model, svm_train

    y, x = svm_read_problem(data, return_scipy=True)
    prob = svm_problem(y, x)
    model = svm_train(prob, options + " -q")
    svm_save_model(str(tmp_path / "libsvm.model"), model)
    return model, x, y


@pytest.mark.parametrize("options", ["-c 1", "-s 0 -t 1 -d 2 -g 0.1 -r 1 -c 10", "-s 1 -n 0.4",
                                     "-c 2 -w1 3 -w-1 0.5"])
def test_train_predicts_as_libsvm_trained_with_the_same_options(options, tmp_path):
    result = svmkit_cli("train", "-q", *options.split(), HEART, tmp_path / "ours.model")
    assert result.returncode == 0, result.stderr
    model, x, y = _libsvm(options, HEART, tmp_path)
    from libsvm.svmutil import svm_load_model

    ours_in_libsvm = svm_load_model(str(tmp_path / "ours.model"))
    ours_labels, _ = libsvm_predict(ours_in_libsvm, x)
    their_labels, _ = libsvm_predict(model, x)
    assert np.mean(ours_labels == their_labels) >= 0.995


def test_train_prints_svm_train_summary_and_writes_its_model_file(tmp_path):
    result = svmkit_cli("train", HEART, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("optimization finished, #iter = ")
    assert lines[1].startswith("nu = ")
    obj, rho = (float(v.split(" = ")[1]) for v in lines[2].split(", "))
    assert obj == pytest.approx(-100.877288, rel=1e-5) and rho == pytest.approx(0.424462, abs=5e-4)
    assert lines[3] == "nSV = 132, nBSV = 107"
    assert lines[4] == "Total nSV = 132"
    model = (tmp_path / "heart_scale.model").read_text()
    assert model.startswith("svm_type c_svc\nkernel_type rbf\ngamma ")
    assert "\nlabel 1 -1\nnr_sv 64 68\nSV\n" in model  # svm-train's class order: first appearance


def test_predict_prints_svm_predict_accuracy_line(tmp_path):
    _libsvm("-c 1", HEART, tmp_path)
    result = svmkit_cli("predict", HEART, tmp_path / "libsvm.model", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Accuracy = 86.6667% (234/270) (classification)\n"
    labels = np.loadtxt(tmp_path / "out")
    assert labels.shape == (270,) and set(labels) == {-1.0, 1.0}


def test_predict_regression_prints_mse_and_squared_correlation_as_libsvm(tmp_path):
    from libsvm.svmutil import svm_predict

    model, x, y = _libsvm("-s 3 -c 4 -p 0.5", HOUSING, tmp_path)
    _, (_, mse, scc), _ = svm_predict(y, x, model, "-q")
    result = svmkit_cli("predict", HOUSING, tmp_path / "libsvm.model", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f"Mean squared error = {mse:g} (regression)\n"
                             f"Squared correlation coefficient = {scc:g} (regression)\n")


def test_cross_validation_prints_libsvm_lines():
    result = svmkit_cli("train", "-v", "5", "-q", HEART)
    assert result.returncode == 0, result.stderr
    accuracy = float(result.stdout.removeprefix("Cross Validation Accuracy = ").strip().rstrip("%"))
    assert 75 < accuracy < 90
    result = svmkit_cli("train", "-s", "3", "-v", "3", "-q", HOUSING)
    assert result.stdout.startswith("Cross Validation Mean squared error = ")
    assert "Cross Validation Squared correlation coefficient = " in result.stdout


def test_native_format_trains_predicts_and_describes(tmp_path):
    model = tmp_path / "m.svmkit"
    assert svmkit_cli("train", "-q", "--format", "native", HEART, model).returncode == 0
    assert model.read_bytes().startswith(MAGIC)
    info = svmkit_cli("info", model)
    assert info.returncode == 0, info.stderr
    assert "type: SVC" in info.stdout and "free: 25, bounded: 107" in info.stdout
    assert "objective: -100.87" in info.stdout
    result = svmkit_cli("predict", "-q", HEART, model, tmp_path / "out")
    assert result.returncode == 0 and result.stdout == ""


def test_scale_writes_svm_scale_output_and_range_file(tmp_path):
    result = svmkit_cli("scale", "-l", "0", "-u", "1", "-s", tmp_path / "range", HEART)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("1 1:0.854167 2:1 3:1 ") and first.endswith(" ")
    assert (tmp_path / "range").read_text().startswith("x\n0 1\n1 -1 1\n")
    again = svmkit_cli("scale", "-r", tmp_path / "range", HEART)
    assert again.stdout == result.stdout


@pytest.mark.parametrize("args, message", [
    (["train", "-t", "9", HEART], "argument -t/--kernel-type: invalid choice: 9"),
    (["train", "--no-such-flag", HEART], "unrecognized arguments: --no-such-flag"),
    (["train", "missing_file"], "missing_file: No such file or directory"),
    (["train", "-c", "-1", HEART], "C must be > 0"),
    (["train", "-s", "1", "-n", "0.99", HEART], "specified nu is infeasible"),
    (["train", "-w3", "2", HEART], "class_weight names labels [3] that are not in y"),
    (["predict", HEART, "no.model", "out"], "no.model: No such file or directory"),
    (["scale", "-s", "a", "-r", "b", HEART], "cannot use -r and -s simultaneously"),
    (["info"], "the following arguments are required: model_file"),
])
def test_user_mistakes_give_one_line_and_status_1(args, message, tmp_path):
    result = svmkit_cli(*args, cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_malformed_data_and_newer_model_files_are_named(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 1:0.5 2:0.25\n-1 3:abc\n")
    result = svmkit_cli("train", bad)
    assert result.returncode == 1 and "bad.txt, line 2, column" in result.stderr
    newer = tmp_path / "newer.model"
    header = (f'{{"format": {FORMAT_VERSION + 1}, "estimator": "SVC", "params": {{}}, "svmkit": "99.0"}}').encode()
    newer.write_bytes(MAGIC + len(header).to_bytes(8, "little") + header)
    result = svmkit_cli("predict", HEART, newer, tmp_path / "out")
    assert result.returncode == 1
    assert "upgrade svmkit" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_precomputed_kernel_files_follow_their_row_ids(tmp_path):
    """svm-train -t 4 rows are `label 0:ID 1:K(x, x_1) …`; rows may come in any order."""
    from libsvm.svmutil import svm_predict, svm_problem, svm_read_problem, svm_save_model, svm_train

    from conftest import heart_scale
    X, y = heart_scale()
    X = X.toarray()[:120]
    y = y[:120]
    K = X @ X.T
    order = np.random.default_rng(0).permutation(120)
    lines = [f"{y[i]:g} 0:{i + 1} " + " ".join(f"{j + 1}:{K[i, j]:.17g}" for j in range(120)) for i in order]
    path = tmp_path / "kernel.txt"
    path.write_text("\n".join(lines) + "\n")
    result = svmkit_cli("train", "-q", "-t", "4", path, tmp_path / "ours.model")
    assert result.returncode == 0, result.stderr
    yy, xx = svm_read_problem(str(path))
    theirs = svm_train(svm_problem(yy, xx, isKernel=True), "-t 4 -q")
    svm_save_model(str(tmp_path / "theirs.model"), theirs)

    def sv_ids(model_file):
        return sorted(tok for tok in model_file.read_text().split() if tok.startswith("0:"))

    assert sv_ids(tmp_path / "ours.model") == sv_ids(tmp_path / "theirs.model")
    predicted = svmkit_cli("predict", path, tmp_path / "ours.model", tmp_path / "out")
    assert predicted.returncode == 0, predicted.stderr
    _, (acc, _, _), _ = svm_predict(yy, xx, theirs, "-q")
    assert predicted.stdout.startswith(f"Accuracy = {acc:g}%")
    cv = svmkit_cli("train", "-q", "-t", "4", "-v", "3", path)
    assert cv.returncode == 0 and cv.stdout.startswith("Cross Validation Accuracy = "), cv.stderr


@pytest.mark.parametrize("labels, expected", [
    ([2, 0, 1, 0, 2], [2, 0, 1]),   # first appearance
    ([-1, 1, -1], [1, -1]),         # svm-train puts +1 first for the labels -1, +1
    ([3, 1, 3], [3, 1]),
])
def test_svm_train_class_order(labels, expected):
    from svmkit.cli.train import libsvm_class_order

    y = np.array(labels)
    classes, y_enc = np.unique(y, return_inverse=True)
    ordered, codes = libsvm_class_order(classes, y_enc)
    assert ordered.tolist() == expected
    assert np.array_equal(ordered[codes], y)


def test_train_b1_writes_a_model_whose_probabilities_libsvm_reproduces(tmp_path):
    from libsvm.svmutil import svm_load_model, svm_predict, svm_read_problem

    result = svmkit_cli("train", "-q", "-b", "1", "-c", "2", HEART, tmp_path / "ours.model")
    assert result.returncode == 0, result.stderr
    assert "\nprobA " in (tmp_path / "ours.model").read_text()
    result = svmkit_cli("predict", "-b", "1", HEART, tmp_path / "ours.model", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Accuracy = ")
    lines = (tmp_path / "out").read_text().splitlines()
    assert lines[0] == "labels 1 -1"  # svm-train's class order
    ours = np.array([[float(v) for v in line.split()] for line in lines[1:]])
    y, x = svm_read_problem(HEART, return_scipy=True)
    labels, _, proba = svm_predict(y, x, svm_load_model(str(tmp_path / "ours.model")), "-b 1 -q")
    np.testing.assert_array_equal(ours[:, 0], labels)
    np.testing.assert_allclose(ours[:, 1:], proba, atol=1e-5)  # svm-predict prints %g


def test_predict_b1_on_a_model_without_probabilities_is_refused(tmp_path):
    svmkit_cli("train", "-q", HEART, tmp_path / "plain.model")
    result = svmkit_cli("predict", "-b", "1", HEART, tmp_path / "plain.model", tmp_path / "out")
    assert result.returncode == 1 and "does not support probability estimates" in result.stderr
    result = svmkit_cli("predict", HEART, tmp_path / "plain.model", tmp_path / "out")
    assert "probability" not in result.stdout


def test_regression_b1_prints_the_laplace_sigma_as_libsvm(tmp_path):
    result = svmkit_cli("train", "-s", "3", "-b", "1", HOUSING, tmp_path / "svr.model")
    assert result.returncode == 0, result.stderr
    assert "z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma= " in result.stdout
    assert "\nprobA " in (tmp_path / "svr.model").read_text()
    result = svmkit_cli("predict", "-b", "1", HOUSING, tmp_path / "svr.model", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Prob. model for test data: target value = predicted value + z")
    assert len((tmp_path / "out").read_text().splitlines()) == 506


def _three_classes(tmp_path):
    """iris as a LIBSVM data file (labels 0, 1, 2)."""
    from sklearn.datasets import dump_svmlight_file, load_iris

    X, y = load_iris(return_X_y=True)
    dump_svmlight_file(X, y, str(tmp_path / "iris"), zero_based=False)
    return str(tmp_path / "iris")


#: Every LIBLINEAR solver `train --linear` builds: -s, the name its model file gives, the data.
LIBLINEAR_RUNS = [("1", "L2R_L2LOSS_SVC_DUAL", HEART), ("2", "L2R_L2LOSS_SVC", HEART),
                  ("3", "L2R_L1LOSS_SVC_DUAL", HEART), ("4", "MCSVM_CS", HEART), ("4", "MCSVM_CS", "iris"),
                  ("5", "L1R_L2LOSS_SVC", HEART), ("5", "L1R_L2LOSS_SVC", "iris"), ("11", "L2R_L2LOSS_SVR", HOUSING),
                  ("12", "L2R_L2LOSS_SVR_DUAL", HOUSING), ("13", "L2R_L1LOSS_SVR_DUAL", HOUSING)]


@pytest.mark.parametrize("solver, name, data", LIBLINEAR_RUNS, ids=[f"s{s}-{d.split('/')[-1]}" for s, _, d in LIBLINEAR_RUNS])
def test_linear_train_writes_a_liblinear_model_that_liblinear_predicts_alike(solver, name, data, tmp_path):
    """The model file names the solver, liblinear reads it and predicts as svmkit does, and its
    predictions agree with those of liblinear's own model of the same options."""
    from liblinear.liblinearutil import load_model, predict, svm_read_problem, train

    data = _three_classes(tmp_path) if data == "iris" else data
    model = tmp_path / f"s{solver}.model"
    result = svmkit_cli("train", "--linear", "-s", solver, "-B", "1", data, model)
    assert result.returncode == 0, result.stderr
    assert model.read_text().startswith(f"solver_type {name}\n")
    result = svmkit_cli("predict", data, model, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    ours = np.loadtxt(tmp_path / "out")
    y, x = svm_read_problem(data)
    theirs, _, _ = predict(y, x, load_model(str(model)), "-q")
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)
    own, _, _ = predict(y, x, train(y, x, f"-s {solver} -B 1 -q"), "-q")
    if solver in ("11", "12", "13"):
        np.testing.assert_allclose(ours, own, atol=0.05 * np.ptp(y))
    else:
        assert np.mean(ours == np.array(own)) >= 0.98
    info = svmkit_cli("info", model)
    assert info.returncode == 0 and "kernel: linear (primal weights)" in info.stdout


def test_predict_reads_models_liblinear_wrote(tmp_path):
    from liblinear.liblinearutil import predict, save_model, svm_read_problem, train

    y, x = svm_read_problem(HEART)
    model = train(y, x, "-s 3 -B 1 -q")
    save_model(str(tmp_path / "lib.model"), model)
    _, (accuracy, _, _), _ = predict(y, x, model, "-q")
    result = svmkit_cli("predict", HEART, tmp_path / "lib.model", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Accuracy = {accuracy:g}%")


@pytest.mark.parametrize("args, message", [
    (["--linear", "-s", "6"], "svmkit builds LIBLINEAR's solvers [1, 2, 3, 4, 5, 11, 12, 13]"),
    (["-s", "12"], "LIBLINEAR's solver numbers need --linear"),
    (["--linear", "--format", "native"], "a --linear model is written as a LIBLINEAR file"),
])
def test_linear_flag_mistakes_are_named(args, message, tmp_path):
    result = svmkit_cli("train", *args, HEART, cwd=tmp_path)
    assert result.returncode == 1 and message in result.stderr


def _two_d_files(tmp_path):
    from sklearn.datasets import dump_svmlight_file, make_moons

    X, y = make_moons(80, noise=0.2, random_state=0)
    dump_svmlight_file(X, 2 * y - 1, str(tmp_path / "moons"), zero_based=False)
    x = np.linspace(-3, 3, 40)[:, None]
    dump_svmlight_file(x, np.sinc(x).ravel(), str(tmp_path / "sinc"), zero_based=False)


@pytest.mark.parametrize("train_args, data", [([], "moons"), (["-s", "3", "-c", "10"], "sinc"),
                                              (["-s", "3", "--format", "native"], "sinc")])
def test_plot_draws_two_d_classification_and_one_d_regression(train_args, data, tmp_path):
    _two_d_files(tmp_path)
    assert svmkit_cli("train", "-q", *train_args, tmp_path / data, tmp_path / "m.model").returncode == 0
    result = svmkit_cli("plot", "-o", tmp_path / "m.png", tmp_path / "m.model", tmp_path / data)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_says_which_plot_applies_to_other_data(tmp_path):
    svmkit_cli("train", "-q", HEART, tmp_path / "h.model")
    result = svmkit_cli("plot", tmp_path / "h.model", HEART, cwd=tmp_path)
    assert result.returncode == 1 and "draws 2-D classification or 1-D regression data" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_version_prints_the_package_version():
    import svmkit

    result = svmkit_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"svmkit {svmkit.__version__}"
    as_package = subprocess.run([sys.executable, "-m", "svmkit", "--version"], capture_output=True, text=True)
    assert as_package.returncode == 0 and as_package.stdout == result.stdout


@pytest.mark.parametrize("command", [
    ["train", "-q", HEART, "{missing}/m.model"],
    ["predict", "-q", HEART, "{model}", "{missing}/out"],
    ["grid", "-log2c", "1,1,1", "-log2g", "1,1,1", "--out", "{missing}/t.csv", HEART],
    ["scale", "-s", "{missing}/range", HEART],
    ["plot", "-o", "{missing}/p.png", "{model}", HEART],
])
def test_an_unwritable_output_fails_before_any_work(command, tmp_path):
    model = tmp_path / "m.model"
    assert svmkit_cli("train", "-q", HEART, model).returncode == 0
    args = [a.format(missing=tmp_path / "no" / "such", model=model) for a in command]
    result = svmkit_cli(*args)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and f"{tmp_path}/no/such" in result.stderr
    assert "No such file or directory" in result.stderr
    assert result.stdout == ""  # nothing was fitted or predicted, so nothing was reported


def test_predict_warns_when_the_data_is_wider_than_the_model(tmp_path):
    narrow, wide = tmp_path / "narrow", tmp_path / "wide"
    narrow.write_text("1 1:0.5 2:1\n-1 1:-0.5 2:-1\n1 1:0.4\n-1 2:-0.8\n")
    wide.write_text("1 1:0.5 2:1 3:0.2\n-1 1:-0.5\n")
    assert svmkit_cli("train", "-q", narrow, tmp_path / "m.model").returncode == 0
    result = svmkit_cli("predict", wide, tmp_path / "m.model", tmp_path / "out")
    assert result.returncode == 0
    assert "Warning: the data has 3 features, the model 2" in result.stderr
    assert "Accuracy" in result.stdout


def run_main(*args):
    """main() in this process: (status, stdout, stderr), for the checks that need no subprocess."""
    import contextlib
    import io

    from svmkit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's exit
            status = exc.code
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command, first", [
    ("train", "Usage: svmkit train [options] training_set_file [model_file]"),
    ("predict", "Usage: svmkit predict [options] test_file model_file output_file"),
    ("scale", "Usage: svmkit scale [options] data_filename")])
def test_a_bare_command_prints_libsvm_usage_and_where_help_is(command, first):
    """Issue 53: a bare `svmkit train` printed one line where svm-train prints its usage."""
    status, out, err = run_main(command)
    assert status == 1 and out == ""
    assert err.startswith(first + "\noptions:\n") and "--help : every option in full" in err


def test_train_h_shows_the_usage_and_says_h_is_shrinking():
    """Issue 53: `svmkit train -h` said only `argument -h/--shrinking: expected one argument`."""
    for args in (["-h"], ["-h", HEART]):
        status, _, err = run_main("train", *args)
        assert status == 1 and err.startswith("Usage: svmkit train [options]")
        assert "-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)" in err
        assert err.splitlines()[-1].endswith("(-h is svm-train's shrinking flag, 0 or 1; `svmkit train --help` "
                                             "shows the help)")


def test_train_leaves_the_cache_to_the_estimator_unless_m_is_given():
    """Issue 53: svm-train's 100 MB cache made `svmkit train` on a9a 35 s where Python took 13 s."""
    from svmkit.cli.main import build_parser
    from svmkit.cli.train import build_estimator
    from svmkit.models import SVC

    default = build_estimator(build_parser().parse_args(["train", HEART]), 13)
    assert default.cache_size == SVC().cache_size
    assert build_estimator(build_parser().parse_args(["train", "-m", "40", HEART]), 13).cache_size == 40


def test_linear_without_s_takes_liblinears_default_solver(tmp_path):
    """LIBLINEAR's train defaults to -s 1 (L2-loss SVC, dual); --linear without -s did not run."""
    assert run_main("train", "--linear", HEART, tmp_path / "default.model")[0] == 0
    assert run_main("train", "--linear", "-s", "1", HEART, tmp_path / "s1.model")[0] == 0
    text = (tmp_path / "default.model").read_text()
    assert text.startswith("solver_type L2R_L2LOSS_SVC_DUAL\n") and text == (tmp_path / "s1.model").read_text()


def test_nu_svc_with_class_weights_writes_svm_trains_model(tmp_path):
    """svm-train -s 1 ignores -w (solve_nu_svc has no C to weigh); `svmkit train -s 1 -w1 3`
    wrote a weighted model with other support vectors. It now writes svm-train's, and says -w
    had no effect."""
    from libsvm.svmutil import svm_load_model

    status, _, err = run_main("train", "-s", "1", "-n", "0.4", "-w1", "3", HEART, tmp_path / "ours.model")
    assert status == 0 and "-w has no effect on nu-SVC (-s 1), as in svm-train" in err
    theirs, _, _ = _libsvm("-s 1 -n 0.4 -w1 3", HEART, tmp_path)
    unweighted, _, _ = _libsvm("-s 1 -n 0.4", HEART, tmp_path)
    ours = svm_load_model(str(tmp_path / "ours.model"))
    assert ours.get_nr_sv() == theirs.get_nr_sv() == unweighted.get_nr_sv()
    assert ours.rho[0] == pytest.approx(theirs.rho[0], abs=1e-5)


def test_scale_refuses_a_feature_index_beyond_its_limit_naming_it(tmp_path):
    """Issue 53: an index of 2,000,000,000 made `svmkit scale` allocate 7.45 GiB (data) or
    14.9 GiB (a 3-line range file with -r) and die with a MemoryError traceback."""
    data, ranges = tmp_path / "wide", tmp_path / "range"
    data.write_text("1 1:0.5 3:1\n-1 1:-0.5 2000000000:2\n")
    ranges.write_text("x\n-1 1\n2000000000 0 1\n")
    status, out, err = run_main("scale", data)
    assert status == 1 and out == "" and err.count("\n") == 1
    assert err.startswith(f"svmkit scale: error: {data}, data row 2: feature index 2000000000 is beyond svmkit "
                          "scale's limit of 33554432")
    status, _, err = run_main("scale", "-r", ranges, HEART)
    assert status == 1 and err.startswith(f"svmkit scale: error: {ranges}, line 3: feature index 2000000000")


def test_plot_dpi_out_of_range_is_named():
    """Issue 53: `plot --dpi 100000` ended in a memory traceback."""
    status, _, err = run_main("plot", "--dpi", "100000", "m.model", HEART)
    assert status == 1
    assert err == "svmkit plot: error: argument --dpi: dots per inch must be 1 to 1200, got 100000\n"


def test_info_describes_a_saved_pipeline_step_by_step(tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    import svmkit
    from svmkit.cli.info import describe

    X, y = svmkit.load_svmlight(str(DATA / "heart_scale"))
    svmkit.save(make_pipeline(StandardScaler(with_mean=False), svmkit.SVC()).fit(X, y), tmp_path / "pipe.svmkit")
    lines = describe(svmkit.load(tmp_path / "pipe.svmkit"))
    assert lines[0] == "pipeline: standardscaler (StandardScaler) -> svc (SVC)"
    assert lines[1] == "type: SVC" and any(line.startswith("support vectors: ") for line in lines)


@pytest.mark.parametrize("args", [["train", "-s", "0", "-n", "nan"], ["train", "-c", "NaN"], ["scale", "-l", "nan"]])
def test_a_nan_option_is_refused_by_name(args, tmp_path):
    status, _, err = run_main(*args, DATA / "heart_scale", tmp_path / "out")
    assert status != 0 and "is not a number (NaN)" in err and args[-2] in err
