# Two commands do all the set-up on a fresh machine with Python 3.11+:
#   make demo   runs the main job (a real demo evaluation)
#   make test   runs the whole test suite: ruff, mypy --strict, the import contract, pytest
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo quickstart test lint typecheck contract pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/scorecore eval examples/demo_scorers.py --data examples/data/demo.jsonl \
		--store sqlite:demo.sqlite --threshold keyword-coverage=0.5

quickstart: $(STAMP)
	$(BIN)/python examples/quickstart.py

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

contract: $(STAMP)
	$(BIN)/lint-imports

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck contract pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/evals_trivial.py
	$(BIN)/python benchmarks/evals_judge_latency.py
	$(BIN)/python benchmarks/evals_memory.py
	$(BIN)/python benchmarks/http_judge.py
	$(BIN)/python benchmarks/cache.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .hypothesis demo.sqlite*
