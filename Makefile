PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The docs' MathJax, from the npm registry, served with the pages (no network when reading them).
MATHJAX := mathjax@3.2.2

.PHONY: run test docs install install-dev bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Each install compiles the C++ core (svmkit._core) with the system's compiler; nothing
# compiles when svmkit runs.
install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[plot]"

install-dev: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"

run: install
	$(BIN)/svmkit easy data/svmguide1 data/svmguide1.t -o build/easy

test: install-dev
	$(BIN)/python -m pytest

# The documentation: the user guide, the API, the gallery (every examples/plot_*.py is run for
# its figures) and the benchmark pages drawn from benchmarks/results/*.json; warnings are errors.
docs: install
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	npm install --prefix build/mathjax --no-save --no-audit --no-fund --loglevel=error $(MATHJAX)
	$(BIN)/python -m sphinx -W --keep-going -b html docs build/docs

bench: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	$(BIN)/python benchmarks/bench_svc.py
	$(BIN)/python benchmarks/bench_grid.py

clean:
	rm -rf $(VENV) build src/*.egg-info docs/auto_examples docs/benchmarks/generated
