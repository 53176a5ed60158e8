# Every target is idempotent and works on a fresh Debian machine as root:
# `make test` installs what it needs (venv, Docker engine, base image) by itself.
VENV       ?= .venv
PYTHON     ?= python3
BASE_IMAGE ?= factory/python:3.11
BIN        := $(VENV)/bin

.PHONY: setup docker images test lint demo bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

docker:
	@bash scripts/ensure-docker.sh

images: docker
	@bash scripts/build-base-image.sh $(BASE_IMAGE)

test: setup docker images
	$(BIN)/pytest -q -ra

lint: setup
	$(BIN)/ruff check factory tests bench

# Until the scheduler lands (issue 7): the demo pipeline's plan, then every demo task
# verified for real (gold fix resolves, empty patch does not) in fresh containers.
demo: setup docker images
	$(BIN)/factory run pipelines/demo.yaml --dry-run
	$(BIN)/factory images build pipelines/tasksets/demo
	$(BIN)/factory tasks validate pipelines/tasksets/demo --jobs 2

bench: setup docker images
	$(BIN)/python bench/run.py

clean:
	-$(BIN)/factory clean --all
	rm -rf $(VENV) .pytest_cache .ruff_cache
