#!/usr/bin/env bash
# make test: every stage of the suite, scheduled for a 2-core machine, with the wall time of
# each stage printed at the end (integration_tests/README.md, "How make test is scheduled").
#
#   1. set-up, reported apart: scripts/bootstrap.sh (venv, Docker engine, broker image) and
#      python -m integration_tests.prepare (other Kafka versions' images, client venvs,
#      Spark's Kafka source): each a cache, about nothing once made.
#   2. the integration suite in parallel (pytest-xdist, INTEGRATION_WORKERS workers, the
#      shared broker and the serial groups of integration_tests/scheduling.py), and meanwhile,
#      one after the other at the lowest CPU priority (nice 19: they take only what the
#      integration tests leave idle), the stages that need no broker: lint, type check, the
#      broker-side assignor's Java tests, the runtime's unit tests on every kafka-python
#      version, the adapter's on kafka-python 2.x, and the unit tests. Their output is kept and
#      printed after the integration suite's.
#   3. the stage table (wall seconds, result; each integration group's wall time and the
#      machine's 1-minute load meanwhile) and one closing line with the tests' counts.
#
# Every stage runs even when an earlier one failed (one CI log shows every failure); the exit
# code is non-zero when any failed. pytest's "no tests collected" (exit 5) fails too and, with
# PYTEST_RC_FILE set (.ci/run), the integration pytest's exit code is written there.
#
# Environment: PYTEST_ARGS (to both pytest runs), PYTEST_TIMEOUT (600), INTEGRATION_WORKERS (4),
# TEST_STAGES_SERIAL=1 (the no-broker stages before the integration suite, not beside it),
# TIMING_SERIAL=1 (the timing-sensitive tests after the others, one at a time).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PY=.venv/bin/python
WORKERS=${INTEGRATION_WORKERS:-4}
TIMEOUT=${PYTEST_TIMEOUT:-600}
read -r -a EXTRA <<<"${PYTEST_ARGS:-}"
out=$(mktemp -d "${TMPDIR:-/tmp}/kafka-assignors-test.XXXXXX")
trap 'rm -rf "$out"' EXIT
times="$out/times"
export KAFKA_ASSIGNORS_GROUP_TIMES="$out/groups"
: >"$times"
run_started=$EPOCHSECONDS

# stage NAME CMD...: run CMD, note its wall seconds, result and start
stage() {
    local name=$1 t0=$EPOCHSECONDS rc=0
    shift
    "$@" || rc=$?
    printf '%s\t%s\t%s\t%s\n' "$name" "$((EPOCHSECONDS - t0))" "$rc" "$((t0 - run_started))" \
        >>"$times"
    return "$rc"
}

echo "== set-up (one-time; cached)"
if ! stage "set-up: bootstrap (venv, Docker engine, broker image)" scripts/bootstrap.sh; then
    echo "make test: set-up failed: nothing can run" >&2
    exit 1
fi
stage "set-up: images, client venvs, Spark's Kafka source" "$PY" -m integration_tests.prepare

no_broker_stages() {
    stage "lint (ruff)" .venv/bin/ruff check . >"$out/lint.log" 2>&1
    stage "type check (mypy --strict)" .venv/bin/mypy >"$out/typecheck.log" 2>&1
    stage "Java (broker-side assignor)" scripts/broker-assignor.sh test >"$out/java.log" 2>&1
    stage "kafka-python versions (runtime unit tests)" scripts/test-kafka-python-versions.sh \
        >"$out/kafka-python-versions.log" 2>&1
    stage "kafka-python 2.x (adapter unit tests)" make --no-print-directory unit-kafka-python-2 \
        >"$out/kafka-python-2.log" 2>&1
    stage "unit tests" "$PY" -m pytest unit_tests -q -p no:cacheprovider \
        --junitxml="$out/unit.xml" "${EXTRA[@]}" >"$out/unit.log" 2>&1
    echo $? >"$out/unit.rc"
}
show_no_broker_logs() {
    local name
    for name in lint typecheck java kafka-python-versions kafka-python-2 unit; do
        [[ -f "$out/$name.log" ]] || continue
        echo "== $name"
        cat "$out/$name.log"
    done
}

if [[ "${TEST_STAGES_SERIAL:-0}" == 1 ]]; then
    no_broker_stages
    show_no_broker_logs
else
    (exec nice -n 19 bash -c "$(declare -f stage no_broker_stages); \
        out='$out' times='$times' PY='$PY' run_started=$run_started EXTRA=(${EXTRA[*]@Q}); \
        no_broker_stages") &
    lane=$!
fi

# Tests whose judges compare timings side by side (ours beside the client alone, kept-partition
# pauses, duplicates around a rebalance). By default they run in the one parallel run, beside
# the other tests: each judge measures the machine's stall meanwhile and allows for it
# (integration_tests/README.md, "Timing-sensitive tests in the parallel run"), and
# scheduling.py keeps them from running two at a time. TIMING_SERIAL=1 runs them after the
# others instead, one at a time, with nothing beside them.
TIMING_SENSITIVE=(
    integration_tests/test_usage_matrix_kafka_python.py
    integration_tests/test_usage_matrix_kafka_python_2.py
    integration_tests/test_usage_matrix_confluent.py
    integration_tests/test_usage_matrix_aiokafka.py
    integration_tests/test_usage_matrix_kafka_python_consumer_protocol_java.py
    integration_tests/test_e2e/test_chaos.py
    integration_tests/test_e2e/test_migration.py
    integration_tests/test_kafka_python_runtime_live.py
    integration_tests/test_confluent_bridge.py
    integration_tests/test_aiokafka_cooperative_live.py
)
ignored=()
if [[ "${TIMING_SERIAL:-0}" == 1 ]]; then
    for file in "${TIMING_SENSITIVE[@]}"; do ignored+=("--ignore=$file"); done
fi

echo "== integration tests ($WORKERS workers)"
rc=0
stage "integration tests ($WORKERS workers)" "$PY" -m pytest integration_tests -n "$WORKERS" \
    "${ignored[@]}" --timeout="$TIMEOUT" --durations=25 --junitxml="$out/integration.xml" \
    "${EXTRA[@]}" || rc=$?

if [[ "${TEST_STAGES_SERIAL:-0}" != 1 ]]; then
    wait "$lane"
    show_no_broker_logs
fi

serial_rc=5
if [[ "${TIMING_SERIAL:-0}" == 1 ]]; then
    echo "== integration tests, timing-sensitive (one at a time, nothing beside them)"
    serial_rc=0
    stage "integration tests (timing-sensitive, serial)" "$PY" -m pytest "${TIMING_SENSITIVE[@]}" \
        --timeout="$TIMEOUT" --durations=10 --junitxml="$out/integration-serial.xml" \
        "${EXTRA[@]}" || serial_rc=$?
fi
# one exit code for both runs: a failure of either; "no tests collected" (5) only if neither
# collected any (PYTEST_ARGS may select tests of one run only)
if [[ $rc -eq 5 && $serial_rc -eq 5 ]]; then
    echo "make test: pytest collected no integration tests at all (exit 5): failing" >&2
elif [[ $rc -eq 0 || $rc -eq 5 ]]; then
    rc=$((serial_rc == 5 ? 0 : serial_rc))
fi
if [[ -n "${PYTEST_RC_FILE:-}" ]]; then echo "$rc" >"$PYTEST_RC_FILE"; fi
unit_rc=$(cat "$out/unit.rc" 2>/dev/null || echo 1)
if [[ $unit_rc -eq 5 ]]; then echo "make test: pytest collected no unit tests (exit 5): failing" >&2; fi

echo
echo "== make test: wall time of each stage (started at +s from the start of make test)"
failed=0
last_integration=$(grep '^integration' "$times" | tail -n 1 | cut -f1)
{ grep '^set-up' "$times"; grep '^integration' "$times"; grep -v '^set-up\|^integration' "$times"; } |
while IFS=$'\t' read -r name seconds code began; do
    result=ok
    if [[ $code != 0 ]]; then result="FAILED (exit $code)"; fi
    printf '  %-58s %6s s  (+%s s)  %s\n' "$name" "$seconds" "$began" "$result"
    # both integration runs write one file of group times: shown once, after the last of them
    if [[ $name == "$last_integration" && -s "$KAFKA_ASSIGNORS_GROUP_TIMES" ]]
    then
        cat "$KAFKA_ASSIGNORS_GROUP_TIMES"
    fi
done
if cut -f3 "$times" | grep -qv '^0$'; then failed=1; fi
printf '  %-58s %6s s\n' "make test, all stages (wall)" "$((EPOCHSECONDS - run_started))"
read -r l1 l5 l15 _ </proc/loadavg
echo "  machine: $(nproc) CPUs, load average now $l1 / $l5 / $l15 (1 / 5 / 15 min)"

# one closing line for both pytest runs (unit + integration), from their JUnit reports
"$PY" - "$out/unit.xml" "$out/integration.xml" "$out/integration-serial.xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET
n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        continue
    for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
        for key in n:
            n[key] += int(suite.get(key, 0))
bad = n["failures"] + n["errors"]
print(f"tests: {n['tests'] - bad - n['skipped']} passed, {bad} failed, {n['skipped']} skipped")
EOF
if [[ $rc -ne 0 || $unit_rc -ne 0 || $failed -ne 0 ]]; then exit 1; fi
exit 0
