# The two set-up commands of the README:
#   make demo   set up (or re-use) .venv and run runspecs/quickstart.yaml offline on the embedded model
#   make test   set up (or re-use) .venv with the test tools and run the whole test suite
VENV ?= .venv
PYTHON ?= python3
# A CPU build of PyTorch; override (e.g. TORCH_SPEC=torch) to take another build.
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin

.PHONY: demo test install install-test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q "$(TORCH_SPEC)"
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
	  || echo "warning: could not install chromium; browser tests will be skipped"

demo: install
	$(BIN)/helm-run runspecs/quickstart.yaml
	$(BIN)/helm-summarize --suite quickstart

test: install-test
	$(BIN)/ruff check holistic tests scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -rs

bench: install-test
	$(BIN)/python scripts/bench_models.py

clean:
	rm -rf $(VENV) output
