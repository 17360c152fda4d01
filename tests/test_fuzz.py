"""The fuzzing suite's quick profile (issue 41): a fixed Hypothesis draw of bad parameters and
data for every estimator, damaged files for every reader and bad arguments for every command,
each in a worker process under a time limit. Every outcome must be a clear error or a correct
result. The long profile is benchmarks/fuzz_profile.py."""

import pytest

import fuzzing

#: Cases drawn (estimators : files : command line = 3 : 2 : 1), their seed and time limit (s).
N_CASES, SEED, TIME_LIMIT = 180, 0, 30.0


@pytest.fixture(scope="module")
def outcomes():
    cases = fuzzing.draw_cases(N_CASES, seed=SEED)
    return cases, fuzzing.run_cases(cases, time_limit=TIME_LIMIT, jobs=2, batch=(len(cases) + 1) // 2)


@pytest.mark.parametrize("target", ["estimator", "file", "cli"])
def test_every_outcome_is_a_clear_error_or_a_correct_result(outcomes, target):
    cases, results = outcomes
    mine = [(c, r) for c, r in zip(cases, results) if c["target"] == target]
    assert len(mine) >= 20
    faults = fuzzing.report(*zip(*mine))
    assert not faults, "\n".join(faults)


def test_the_draw_is_the_same_on_every_run():
    assert fuzzing.draw_cases(30, seed=SEED) == fuzzing.draw_cases(30, seed=SEED)


def test_the_draw_reaches_every_estimator_reader_and_command(outcomes):
    cases, _ = outcomes
    assert {c["what"] for c in cases if c["target"] == "estimator"} == set(fuzzing.ESTIMATORS)
    assert {c["what"] for c in cases if c["target"] == "file"} == {"data", "libsvm", "native", "liblinear"}
    assert {c["what"] for c in cases if c["target"] == "cli"} >= {"train", "predict", "scale", "info", "grid"}


def test_a_hang_and_a_crash_are_told_apart_from_the_case_before_them():
    """The runner's own check: a case that sleeps past the limit is a hang, one that aborts the
    process a crash, and the cases around them still get their outcomes."""
    good = {"target": "probe", "what": "return"}
    cases = [good, {"target": "probe", "what": "sleep"}, good, {"target": "probe", "what": "abort"}, good]
    results = fuzzing.run_cases(cases, time_limit=3.0, jobs=1, batch=len(cases))
    assert [r["outcome"] for r in results] == ["correct", "hang", "correct", "crash", "correct"]


@pytest.mark.parametrize("error, outcome", [
    (ValueError("C must be > 0, got C=-1.0"), "clear"),
    (ValueError("cannot reshape array of size 0 into shape (0,newaxis)"), "unclear"),
    (IndexError("index 3 is out of bounds"), "unclear"),
    (ZeroDivisionError("float division by zero"), "unclear"),
    (ValueError("something went wrong"), "unclear"),
    (MemoryError(), "crash"),
])
def test_errors_are_classed_by_type_and_by_what_they_name(error, outcome):
    assert fuzzing.classify_error(error, ["C"]) == outcome
