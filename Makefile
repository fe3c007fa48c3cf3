# The two commands:
#   make demo   a real consumer group on a real (embedded) Kafka broker
#   make test   ruff + mypy --strict + the broker-side assignor's Java tests + the whole pytest suite,
#               in parallel stages, with the wall time of each printed at the end
# Both prepare the machine first (scripts/bootstrap.sh: .venv, Docker engine, broker image).
#
# Variables: DEMO_ARGS="--keep --strategy roundrobin", PYTEST_ARGS="-k smoke -x",
# BOOTSTRAP_SERVERS=host:port (integration tests against an existing cluster).
#
# A release:
#   make dist   sdist, wheel and broker plugin jar in dist/ (twine-checked, with sha256)

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_TIMEOUT ?= 600
PYTEST_ARGS ?=
DEMO_ARGS ?=

.PHONY: help demo test lint typecheck unit integration bootstrap venv image clean java-test jar \
	kafka-python-versions compat

help:
	@sed -n 's/^#   //p' Makefile

bootstrap:
	@scripts/bootstrap.sh

venv:
	@scripts/bootstrap.sh --no-docker

image:
	@docker/build-image.sh

demo: bootstrap
	$(VENV)/bin/kafka-assignors demo $(DEMO_ARGS)

lint: venv
	$(VENV)/bin/ruff check .

typecheck: venv
	$(VENV)/bin/mypy

# scripts/test-stages.sh: set-up (reported apart), then the integration suite in parallel
# (pytest-xdist, INTEGRATION_WORKERS=4; integration_tests/scheduling.py) beside the stages that
# need no broker (lint, type check, Java, kafka-python versions and 2.x, unit tests; nice 19),
# then the wall time of each stage and integration group with the machine's load.
# pytest's exit code 5 ("no tests collected") fails too; with PYTEST_RC_FILE set (.ci/run does)
# the integration pytest's exit code is written there. --durations=25 on the integration run.
test:
	@PYTEST_ARGS="$(PYTEST_ARGS)" PYTEST_TIMEOUT=$(PYTEST_TIMEOUT) scripts/test-stages.sh

# The broker-side assignor (broker-assignor/, Maven): JUnit tests, equivalence with the core.
java-test:
	@scripts/broker-assignor.sh test

jar:
	@scripts/broker-assignor.sh package

# The kafka-python runtime's unit tests on every kafka-python release it names as tested,
# each in a throwaway venv under the user cache.
kafka-python-versions: venv
	@scripts/test-kafka-python-versions.sh

# The adapter's unit tests again in venvs holding kafka-python 2.2 and 2.3 (made on first use
# under ~/.cache/kafka-assignors/venvs/; the checkout is imported through PYTHONPATH).
KAFKA_PYTHON_2X := 2.2.21 2.3.3
KAFKA_PYTHON_2X_TESTS := unit_tests/test_kafka_python_versions.py unit_tests/test_user_data_ownership.py \
	unit_tests/test_metrics_core.py unit_tests/test_cli_kafka_python_2.py
.PHONY: unit-kafka-python-2
unit-kafka-python-2: venv
	@for v in $(KAFKA_PYTHON_2X); do echo "== unit tests on kafka-python $$v"; \
	$(PY) -m integration_tests.client_venvs pytest $$v -q $(KAFKA_PYTHON_2X_TESTS) || exit 1; done

# The compatibility matrix, every cell (other Kafka and client versions); writes
# docs/compat/results.json (the docs site renders its table). COMPAT_ARGS="-k aiokafka" runs a part.
COMPAT_ARGS ?=
compat:
	@scripts/compat-matrix.sh $(COMPAT_ARGS)

unit: venv
	$(PY) -m pytest unit_tests $(PYTEST_ARGS)

integration: bootstrap
	$(PY) -m pytest integration_tests --timeout=$(PYTEST_TIMEOUT) $(PYTEST_ARGS)

clean:
	rm -rf .pytest_cache .mypy_cache .ruff_cache .hypothesis

# make bench: kafka-python's assignors against ours, side by side (tens of minutes; writes
# benchmarks/results/). BENCH_ARGS="--quick" for a smoke check, "--only 10k uniform" for a part.
BENCH_ARGS ?=
.PHONY: bench
bench: venv
	$(PY) -m benchmarks.assignors $(BENCH_ARGS)

# The documentation site (mkdocs.yml, docs/): `make docs` serves it on http://127.0.0.1:8000/
# (DOCS_ADDR=host:port to change), `make docs-check` builds it with warnings as errors into
# site/. make test checks the same and more (integration_tests/test_docs_site.py: strict build,
# every page in headless Chromium, the phrases lab notes use; integration_tests/test_docs_examples.py:
# every Python example run).
DOCS_ADDR ?= 127.0.0.1:8000
export NO_MKDOCS_2_WARNING := 1
.PHONY: docs docs-check
docs: venv
	$(VENV)/bin/mkdocs serve --strict -a $(DOCS_ADDR)

docs-check: venv
	$(VENV)/bin/mkdocs build --strict --site-dir site
	$(VENV)/bin/lint-imports

# --- release (issue 39) ---------------------------------------------------------------------
# make dist: sdist, wheel and the broker plugin jar (named by version and Kafka API level) in
# dist/, `twine check`ed, with their sha256 (scripts/dist.sh). make installed-test: the built
# wheel installed with its extras into a fresh venv outside the checkout, its commands run there
# (integration_tests/test_installed_wheel.py; part of make test's pytest run too).
.PHONY: dist installed-test
dist: venv
	@scripts/dist.sh

installed-test: bootstrap
	$(PY) -m pytest integration_tests/test_installed_wheel.py --timeout=$(PYTEST_TIMEOUT) $(PYTEST_ARGS)
# --- end of release ---------------------------------------------------------------------------
