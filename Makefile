# Every target is idempotent and works on a fresh Debian machine as root:
# `make test` installs what it needs (venv, Docker engine, base image, browser) by itself.
VENV       ?= .venv
PYTHON     ?= python3
BASE_IMAGE ?= factory/python:3.11
BIN        := $(VENV)/bin

.PHONY: setup llamafactory demo-images docker podman podman-images images lang-images browser registry test lint demo bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev,ray]'
	touch $@

# LLaMA-Factory 0.9.5 in a venv of its own, for the test that loads `--format sharegpt` exports
# through its data pipeline (its release pins datasets, transformers and trl below factory's). Its
# web UI, API and media dependencies stay out: the data pipeline never calls them. torchaudio,
# imported at module level for audio inputs, has no build for the CPU torch on disk, so it goes in
# without its native library, a layout torchaudio supports (it loads no extension then).
LF_VENV ?= .venv-llamafactory
llamafactory: $(LF_VENV)/.installed

$(LF_VENV)/.installed: tests/interchange/llamafactory-requirements.txt
	$(PYTHON) -m venv $(LF_VENV)
	$(LF_VENV)/bin/pip install --quiet --disable-pip-version-check -r $<
	$(LF_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps llamafactory==0.9.5 torchaudio==2.11.1
	rm -f $(LF_VENV)/lib/python3*/site-packages/torchaudio/lib/*.so
	touch $@

docker:
	@bash scripts/ensure-docker.sh

# Rootless Podman, the second sandbox engine: Debian's podman run by the unprivileged user
# `factory` (FACTORY_PODMAN_USER), serving the Docker API on /run/user/<uid>/podman/podman.sock.
# Exit 2 with one line naming what the kernel refuses (no user namespaces, no cgroup delegation).
podman:
	@bash scripts/ensure-podman.sh

# The base and toolchain images in rootless Podman's own store: copied from Docker's where it has
# them, else built as for Docker (debootstrap, Debian's packages), without any registry
podman-images:
	@FACTORY_ENGINE=podman bash scripts/build-base-image.sh $(BASE_IMAGE)
	@for lang in $(LANGS); do FACTORY_ENGINE=podman bash scripts/build-lang-image.sh $$lang || exit $$?; done

images: docker
	@bash scripts/build-base-image.sh $(BASE_IMAGE)

# The toolchain images of the Go, JavaScript (mocha; jest), Java and Rust demo task sets: the base image
# plus Debian's packages (factory/go:1, factory/node:1, factory/jest:1, factory/java:1, factory/rust:1);
# existing ones are kept
LANGS ?= go node jest java rust
lang-images: images
	@for lang in $(LANGS); do bash scripts/build-lang-image.sh $$lang || exit $$?; done

# The demo task sets' images (one per repo, or per Harbor task from its Dockerfile; missing ones
# only): the suite runs agents and the verifier in them, and must not depend on a `make demo` before it
TASKSETS ?= demo demo-go demo-java demo-js demo-jest demo-rust demo-terminal
demo-images: setup lang-images
	@for set in $(TASKSETS); do $(BIN)/factory images build pipelines/tasksets/$$set || exit $$?; done

# Debian's chromium, for the test that opens `factory report`'s page in a headless browser
browser:
	@bash scripts/ensure-debian.sh browser /usr/bin/chromium chromium fonts-dejavu-core

# Debian's registry server, for the tests that pull images from a registry they start on loopback
registry:
	@bash scripts/ensure-debian.sh registry /usr/bin/docker-registry docker-registry

# Podman's tests skip, each saying why, where the kernel refuses rootless Podman: its failure here is not the suite's.
# The suite runs in TEST_WORKERS processes, each taking a whole test file at a time (module fixtures
# build images once); most of a test waits on the engine and its containers, so two share 2 cores well.
TEST_WORKERS ?= 2
test: setup llamafactory docker images lang-images demo-images browser registry
	-@$(MAKE) --no-print-directory podman podman-images
	$(BIN)/pytest -q -ra -n $(TEST_WORKERS) --dist loadfile

lint: setup
	$(BIN)/ruff check factory tests bench

# The whole job offline: the demo task sets in Python, Go, JavaScript, Java and Rust (their
# toolchain images first), the scripted teacher, real sandboxes and verifier, the warehouse and the
# dataset with its card and plots; then three questions to the warehouse and the report page
# (runs/$(DEMO_RUN)/report/index.html); last, a check that the run left no container.
ifndef DEMO_RUN  # expanded once: five commands name the same run
DEMO_RUN := demo-$(shell date +%Y%m%d-%H%M%S)
endif
demo: setup docker images lang-images
	$(BIN)/factory run pipelines/demo.yaml --run-id $(DEMO_RUN)
	$(BIN)/factory query funnel --db runs/$(DEMO_RUN)/warehouse.duckdb
	$(BIN)/factory query learnable_tasks --db runs/$(DEMO_RUN)/warehouse.duckdb
	$(BIN)/factory query pass_rate_by_language --db runs/$(DEMO_RUN)/warehouse.duckdb
	$(BIN)/factory report $(DEMO_RUN)
	@left=$$(docker ps -aq --filter label=factory.run=$(DEMO_RUN)); \
	  if [ -n "$$left" ]; then echo "containers of $(DEMO_RUN) left on the engine: $$left"; exit 1; fi

bench: setup docker images lang-images
	$(BIN)/python bench/run.py

clean:
	-$(BIN)/factory clean --all
	rm -rf $(VENV) $(LF_VENV) .venv-bench .pytest_cache .ruff_cache
