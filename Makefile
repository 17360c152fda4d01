PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test docs install install-dev bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Each install ends by filling Numba's on-disk cache with every compiled loop of svmkit, for
# every signature the estimators use (minutes the first time, seconds once filled; see
# benchmarks/first_use.py), so that no fit, whatever its input, compiles anything.
install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[plot]"
	$(BIN)/python -m svmkit._warmup

install-dev: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m svmkit._warmup

run: install
	$(BIN)/svmkit easy data/svmguide1 data/svmguide1.t -o build/easy

test: install-dev
	$(BIN)/python -m pytest

# The documentation: the user guide, the API, the gallery (every examples/plot_*.py is run for
# its figures) and the benchmark pages drawn from benchmarks/results/*.json; warnings are errors.
docs: install
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	$(BIN)/python -m sphinx -W --keep-going -b html docs build/docs

bench: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	$(BIN)/python benchmarks/bench_svc.py
	$(BIN)/python benchmarks/bench_grid.py

clean:
	rm -rf $(VENV) build src/*.egg-info docs/auto_examples docs/benchmarks/generated
