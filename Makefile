# The two commands:
#   make demo   a real consumer group on a real (embedded) Kafka broker
#   make test   ruff + mypy --strict + the broker-side assignor's Java tests + the whole pytest suite
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

# pytest's exit code is kept (5 = "no tests collected" fails too) and, when
# PYTEST_RC_FILE is set (.ci/run does), written there.
# --durations: every CI log says where the suite's time went (budget: 90 min on 2 cores).
test: bootstrap lint typecheck java-test kafka-python-versions unit-kafka-python-2
	@rc=0; $(PY) -m pytest unit_tests integration_tests --timeout=$(PYTEST_TIMEOUT) --durations=25 $(PYTEST_ARGS) || rc=$$?; \
	if [[ -n "$${PYTEST_RC_FILE:-}" ]]; then echo $$rc > "$$PYTEST_RC_FILE"; fi; \
	if [[ $$rc -eq 5 ]]; then echo "make test: pytest collected no tests (exit 5): failing" >&2; fi; \
	exit $$rc

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
# docs/compat/results.json and the README's table. COMPAT_ARGS="-k aiokafka" runs a part.
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
