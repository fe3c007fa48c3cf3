#!/usr/bin/env bash
# Builds or tests the broker-side assignor (broker-assignor/, a Maven project), installing
# what it needs first: Maven and a Java 17 JDK (Debian's maven, openjdk-17-jdk-headless).
#
#   scripts/broker-assignor.sh test      unit, fuzz and equivalence tests (make test runs this)
#   scripts/broker-assignor.sh package   also writes broker-assignor/target/kafka-assignors-broker-VERSION.jar
#
# Maven keeps what it downloads in ~/.m2: the first run fetches the Kafka api, JUnit and the
# plugins from Maven Central (about a minute), later runs only compile and test (~10 s).
# BROKER_ASSIGNOR_SKIP=1 skips it (e.g. on a machine without Maven Central).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { echo "broker-assignor: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

goal=${1:-test}
[[ $goal == test || $goal == package ]] || die "usage: $0 [test|package]"
if [[ "${BROKER_ASSIGNOR_SKIP:-0}" == 1 ]]; then
    say "BROKER_ASSIGNOR_SKIP=1: not running mvn $goal"
    exit 0
fi
command -v javac >/dev/null 2>&1 || apt_install openjdk-17-jdk-headless
command -v mvn >/dev/null 2>&1 || apt_install maven
command -v mvn >/dev/null 2>&1 || die "mvn (Maven) not found even after installing Debian's maven"

t0=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# -q: only failures are printed; the test reports are in broker-assignor/target/surefire-reports
# The jar's version is the package's (kafka_assignors/_version.py, the one place it is written).
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$ROOT/kafka_assignors/_version.py")
[[ -n $version ]] || die "no __version__ in kafka_assignors/_version.py"
# A benchmark build (mvn -Pbench, benchmarks/broker_assignor.py) leaves bench classes and classes
# compiled against a newer Kafka api in target/; an incremental build over them fails ("failed
# to discover tests"), so start clean after one.
goals=("$goal")
if [[ -e "$ROOT/broker-assignor/target/bench-cp.txt" \
        || -d "$ROOT/broker-assignor/target/test-classes/io/github/kafkaassignors/broker/bench" ]]; then
    say "target/ holds a benchmark build: mvn clean first"
    goals=(clean "$goal")
fi
if ! timeout 900 mvn -B -q -f "$ROOT/broker-assignor/pom.xml" "${goals[@]}" "-Drevision=$version" \
        >"$log" 2>&1; then
    grep -vE '^\s+at |^\[ERROR\] *$' "$log" | head -n 60 >&2
    die "mvn $goal failed (reports: broker-assignor/target/surefire-reports)"
fi
say "mvn $goal passed in $((SECONDS - t0)) s"
