#!/usr/bin/env bash
# Prepares this checkout for `make test` and `make demo`; idempotent and fast when done.
#
#   1. .venv/ (Python >= 3.11) with `pip install -e '.[EXTRAS]' --group dev` (the package with
#      every extra, and the development tools of pyproject.toml's PEP 735 dependency groups;
#      pip is upgraded to >= 25.1 in the venv first, for --group), re-run only when
#      pyproject.toml changed since the last install (stamp file).
#   2. The Docker engine (scripts/ensure-docker.sh: installs/starts it when needed).
#   3. Java >= 17 for Spark (Debian's openjdk-17-jre-headless when missing), and Debian's
#      Chromium with its chromedriver for the report's browser test.
#   4. The broker image (docker/build-image.sh: cached, ~0.1 s when up to date).
#
# Missing Debian packages (python3.X-venv, a JRE, chromium, docker.io, debootstrap, maven) are
# installed with apt-get, as root or through passwordless sudo (scripts/lib.sh).
#
# Options / environment:
#   --no-docker                 only the virtualenv (e.g. for lint)
#   BOOTSTRAP_SERVERS=h:p       tests use that cluster: Docker and the image are skipped
#   KAFKA_ASSIGNORS_IMAGE=img   use that image (needs a registry): nothing is built
#   PYTHON=python3.12           interpreter for a new .venv (default python3)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
say() { echo "bootstrap: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

WITH_DOCKER=1
[[ "${1:-}" == "--no-docker" ]] && WITH_DOCKER=0

EXTRAS="embedded,prometheus,otel,yaml,spark,confluent,aiokafka"
DEV_GROUPS="dev"
VENV="$ROOT/.venv"
STAMP="$VENV/.kafka-assignors-installed"

if [[ ! -x "$VENV/bin/python" ]]; then
    PY=${PYTHON:-python3}
    command -v "$PY" >/dev/null 2>&1 || die "$PY not found (Python >= 3.11 needed)"
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "$PY is $("$PY" -V 2>&1); Python >= 3.11 is needed (set PYTHON=...)"
    say "creating .venv with $("$PY" -V 2>&1)"
    if ! "$PY" -c 'import ensurepip' 2>/dev/null; then
        # Debian splits venv's pip bootstrap into python3.X-venv.
        apt_install "python$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
    fi
    "$PY" -m venv "$VENV" || { rm -rf "$VENV"; die "could not create .venv with $PY"; }
fi

# The requirements of pyproject.toml's dependency groups (PEP 735, include-group resolved),
# one a line: for a pip without --group.
group_requirements() {
    "$VENV/bin/python" - "$@" <<'PY'
import sys, tomllib
groups = tomllib.load(open("pyproject.toml", "rb"))["dependency-groups"]
def expand(name, seen=()):
    for item in groups[name]:
        if isinstance(item, dict):
            if item["include-group"] not in seen:
                yield from expand(item["include-group"], (*seen, name))
        else:
            yield item
for name in sys.argv[1:]:
    print("\n".join(dict.fromkeys(expand(name))))
PY
}

want=$( (cat pyproject.toml; echo "extras=$EXTRAS groups=$DEV_GROUPS") | sha256sum | cut -c1-16)
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$want" ]]; then
    say "installing the package, its extras and the development tools into .venv (pyproject.toml changed or first run) ..."
    t0=$SECONDS
    pip=("$VENV/bin/python" -m pip --disable-pip-version-check)
    # pip >= 25.1 installs dependency groups (--group); an older one gets them listed.
    "${pip[@]}" install -q 'pip>=25.1' || say "could not upgrade pip; listing the groups instead"
    group_args=()
    if "${pip[@]}" install --help | grep -q -- '--group'; then
        for g in $DEV_GROUPS; do group_args+=(--group "$g"); done
    else
        mapfile -t group_args < <(group_requirements $DEV_GROUPS)
    fi
    "${pip[@]}" install -q -e ".[$EXTRAS]" "${group_args[@]}" || die "pip install failed"
    echo "$want" >"$STAMP"
    say "installed in $((SECONDS - t0)) s"
fi

# Bytecode for this checkout's modules: the editable install writes none, and with
# PYTHONDONTWRITEBYTECODE set (as in many CI images) imports do not either, so each of the
# hundreds of processes a test run starts would compile them again (~0.15 CPU-s each).
"$VENV/bin/python" -m compileall -q kafka_assignors integration_tests unit_tests benchmarks \
    >/dev/null || say "compileall failed (a syntax error?): imports will compile instead"

if [[ $WITH_DOCKER == 1 ]]; then
    # Spark (the pipeline, the demo's report) runs on a JVM: Java 17 or newer.
    java_major() { java -version 2>&1 | sed -nE '1s/.*version "([0-9]+).*/\1/p'; }
    if ! command -v java >/dev/null 2>&1 || (($(java_major || echo 0) < 17)); then
        apt_install openjdk-17-jre-headless
    fi
    # make test opens the pipeline's HTML report in headless Chromium (driven through
    # chromedriver by Selenium; no browser download); DejaVu so that its text renders.
    apt_install chromium chromium-driver fonts-dejavu-core
    if [[ -n "${BOOTSTRAP_SERVERS:-}" ]]; then
        say "BOOTSTRAP_SERVERS=$BOOTSTRAP_SERVERS: using that cluster, no Docker needed"
    elif [[ -n "${KAFKA_ASSIGNORS_IMAGE:-}" ]]; then
        scripts/ensure-docker.sh
        say "KAFKA_ASSIGNORS_IMAGE=$KAFKA_ASSIGNORS_IMAGE: not building our image"
    else
        docker/build-image.sh  # ensures the engine first
    fi
fi
