#!/usr/bin/env bash
# The kafka-python runtime's manifest check (names, signatures, config keys; the probes'
# verdicts printed) and unit tests against every kafka-python 3.x
# release on PyPI (listed at run time with `pip index versions`, the newest included; for the
# releases it refuses, REFUSED_RELEASES, that it refuses them), each in a throwaway venv
# under the user cache that holds only that kafka-python and borrows the rest (pytest,
# hypothesis, this package) from .venv.
# `make test` runs it.
#
#   scripts/test-kafka-python-versions.sh            every 3.x release
#   scripts/test-kafka-python-versions.sh 3.0.5 ...  these versions (tested or not)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
# one set of venvs per checkout: each borrows that checkout's .venv (clones may run at once)
checkout=$(pwd -P | sha1sum | cut -c1-12)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/kafka-assignors/kafka-python-versions/$checkout"
if [[ $# -gt 0 ]]; then
    versions="$*"
else
    listed=$($PY -m pip index versions kafka-python --disable-pip-version-check 2>/dev/null \
        | sed -n 's/^Available versions: //p')
    versions=$(echo "$listed" | tr ',' '\n' | tr -d ' ' | grep -E '^3\.[0-9]+\.[0-9]+$' | sort -V)
    if [[ -z "$versions" ]]; then
        echo "could not list kafka-python releases (pip index versions kafka-python)" >&2
        exit 1
    fi
fi
shared=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
tests=(unit_tests/test_kafka_python_runtime.py unit_tests/test_kafka_python_runtime_join.py
       unit_tests/test_kafka_python_runtime_membership.py
       unit_tests/test_kafka_python_runtime_metrics.py
       unit_tests/test_kafka_python_runtime_class.py
       unit_tests/test_kafka_python_runtime_contract.py
       unit_tests/test_kafka_python_runtime_probes.py
       unit_tests/test_kafka_python_fixes.py)
# bounded: one release's unit run never holds the script longer than this
per_version_s=${KAFKA_PYTHON_VERSION_TIMEOUT_S:-600}
refused=$($PY -c 'from kafka_assignors.kafka_python.runtime import REFUSED_RELEASES
print(*REFUSED_RELEASES)')
failed=()
for version in $versions; do
    env="$cache/$version"
    if ! "$env/bin/python" -c "import sys, kafka.version as k; sys.exit(k.__version__ != '$version')" \
            2>/dev/null; then
        rm -rf "$env"
        $PY -m venv "$env"
        "$env/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
            "kafka-python==$version"
    fi
    # this checkout's .venv after the venv's own site-packages: kafka-python comes from the venv
    own=$("$env/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "import site; site.addsitedir('$shared')" > "$own/zz-kafka-assignors-shared.pth"
    echo "== kafka-python $version"
    if [[ " $refused " == *" $version "* ]]; then
        # a release the runtime refuses (REFUSED_RELEASES): that KafkaConsumer and
        # patch_rejoin_hang both refuse it, clearly, and change nothing
        if ! timeout "$per_version_s" "$env/bin/python" -m pytest -q -p no:cacheprovider \
                unit_tests/test_kafka_python_runtime.py -k "refused or fixes" \
                unit_tests/test_kafka_python_fixes.py; then
            failed+=("$version (refusal)")
        fi
    elif ! "$env/bin/python" -c 'from kafka_assignors.kafka_python.runtime.manifest import main
raise SystemExit(main())'; then
        failed+=("$version (manifest)")
    elif ! timeout "$per_version_s" "$env/bin/python" -m pytest -q -p no:cacheprovider \
            "${tests[@]}"; then
        failed+=("$version")
    fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "kafka-python runtime unit tests failed on: ${failed[*]}" >&2
    exit 1
fi
echo "kafka-python runtime unit tests passed on: $versions"
