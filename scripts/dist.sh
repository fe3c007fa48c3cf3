#!/usr/bin/env bash
# make dist: the release's artifacts, built from this checkout.
#
#   scripts/dist.sh [--out DIR] [--skip-java-tests]      (default DIR: dist/)
#
#   DIR/kafka_assignors-VERSION.tar.gz                     sdist
#   DIR/kafka_assignors-VERSION-py3-none-any.whl           wheel
#   DIR/kafka-assignors-broker-VERSION-kafka-api-API.jar   the broker plugin (KIP-848), built
#                                                          against Kafka's API API (4.0: loads
#                                                          in every 4.x broker)
#   DIR/SHA256SUMS                                         their checksums (also printed)
#
# VERSION is kafka_assignors/_version.py's. The files are copied to a staging folder first
# (what git tracks, and new files it does not ignore), the jar is built there with Maven and put
# into the package's broker image recipe (kafka_assignors/embedded/recipe/jars/), so that the
# sdist and the wheel carry it: `kafka-assignors demo` then builds its broker image from a pip
# install. `twine check` runs on the sdist and the wheel. Nothing in the checkout changes but DIR.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
say() { echo "dist: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

OUT="$ROOT/dist"
MVN_TESTS=()
while (($#)); do
    case $1 in
        --out) OUT=$2; shift 2 ;;
        --skip-java-tests) MVN_TESTS=(-Dmaven.test.skip=true); shift ;;
        *) die "usage: $0 [--out DIR] [--skip-java-tests]" ;;
    esac
done
PY=${PYTHON:-"$ROOT/.venv/bin/python"}
[[ -x $PY ]] || die "$PY not found: run make venv first (or set PYTHON)"
"$PY" -c 'import build, twine' 2>/dev/null \
    || die "build and twine are not installed in $PY: pip install --group release (make venv does)"

VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' kafka_assignors/_version.py)
[[ -n $VERSION ]] || die "no __version__ in kafka_assignors/_version.py"
API=$(sed -n 's:.*<kafka.api.version>\([0-9]*\.[0-9]*\)\..*</kafka.api.version>.*:\1:p' broker-assignor/pom.xml)
[[ -n $API ]] || die "no kafka.api.version in broker-assignor/pom.xml"
JAR_NAME="kafka-assignors-broker-$VERSION-kafka-api-$API.jar"

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/kafka-assignors-dist.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
git ls-files -z --cached --others --exclude-standard \
    | xargs -0 -I{} sh -c 'test -e "{}" && echo "{}"' \
    | tar -cf - -T - | tar -xf - -C "$STAGE"

command -v javac >/dev/null 2>&1 || apt_install openjdk-17-jdk-headless
command -v mvn >/dev/null 2>&1 || apt_install maven
t0=$SECONDS
say "broker plugin jar (mvn package, Kafka API $API, version $VERSION) ..."
timeout 900 mvn -B -q -f "$STAGE/broker-assignor/pom.xml" package "-Drevision=$VERSION" \
    ${MVN_TESTS[@]+"${MVN_TESTS[@]}"} >"$STAGE/mvn.log" 2>&1 || {
    grep -vE '^\s+at ' "$STAGE/mvn.log" | head -n 40 >&2
    die "mvn package failed"
}
RECIPE_JARS="$STAGE/kafka_assignors/embedded/recipe/jars"
mkdir -p "$RECIPE_JARS"
cp "$STAGE/broker-assignor/target/kafka-assignors-broker-$VERSION.jar" "$RECIPE_JARS/$JAR_NAME"
say "jar built in $((SECONDS - t0)) s"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/kafka_assignors-$VERSION"* "$OUT/$JAR_NAME" "$OUT/SHA256SUMS"
say "sdist and wheel (python -m build) ..."
"$PY" -m build --sdist --wheel --outdir "$OUT" "$STAGE" >"$STAGE/build.log" 2>&1 || {
    tail -n 40 "$STAGE/build.log" >&2
    die "python -m build failed"
}
cp "$RECIPE_JARS/$JAR_NAME" "$OUT/"
SDIST="$OUT/kafka_assignors-$VERSION.tar.gz"
WHEEL="$OUT/kafka_assignors-$VERSION-py3-none-any.whl"
[[ -s $SDIST && -s $WHEEL ]] || die "expected $SDIST and $WHEEL"
"$PY" -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' \
    "$WHEEL" "kafka_assignors/embedded/recipe/jars/$JAR_NAME" || die "the wheel lacks $JAR_NAME"
"$PY" -m twine check --strict "$SDIST" "$WHEEL" >&2 || die "twine check failed"
(cd "$OUT" && sha256sum "${SDIST##*/}" "${WHEEL##*/}" "$JAR_NAME" >SHA256SUMS)
say "artifacts in $OUT (sha256):"
cat "$OUT/SHA256SUMS"
