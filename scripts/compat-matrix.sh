#!/usr/bin/env bash
# The compatibility matrix (integration_tests/test_compat/): the live tests that matter for
# compatibility on every Kafka broker and client library version of the matrix, the default
# versions included; then docs/compat/results.json from this run (the docs site's Compatibility page
# renders its table from that file).
#
#   scripts/compat-matrix.sh                   every cell
#   scripts/compat-matrix.sh -k aiokafka       some cells (pytest args): merged into the
#                                              earlier results of the others
#
# `make test` runs the same tests minus the default versions' cells (the rest of the suite
# runs those) and writes nothing. Broker images of the other versions and the client
# libraries' throwaway venvs are made on first use and cached (~/.cache/kafka-assignors/).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/bootstrap.sh

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
merge=()
(($#)) && merge=(--merge)
rc=0
KAFKA_ASSIGNORS_COMPAT_FULL=1 KAFKA_ASSIGNORS_COMPAT_RESULTS="$raw" \
    .venv/bin/python -m pytest integration_tests/test_compat --timeout=1500 \
    -p no:cacheprovider "$@" || rc=$?
if [[ ! -s "$raw" ]]; then
    echo "compat-matrix: the run recorded no cell (pytest exit $rc)" >&2
    exit $((rc ? rc : 1))
fi
.venv/bin/python -m integration_tests.test_compat.table --from "$raw" "${merge[@]}"
exit "$rc"
