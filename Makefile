PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test install install-dev bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

install-dev: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"

run: install
	$(BIN)/svmkit easy data/heart_scale

test: install-dev
	$(BIN)/python -m pytest

bench: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	$(BIN)/python benchmarks/bench_svc.py

clean:
	rm -rf $(VENV) build src/*.egg-info
