#!/usr/bin/env bash
# Builds the KRaft Apache Kafka broker image without any container registry.
#
#   docker/build-image.sh [--force]
#
# Steps (each cached under ${XDG_CACHE_HOME:-$HOME/.cache}/kafka-assignors/):
#   1. scripts/ensure-docker.sh (installs/starts the engine when needed).
#   2. If the image exists and was built from this same recipe (label
#      io.kafka-assignors.recipe = hash of the files in docker/), stop: ~0.2 s.
#   3. Base image: Debian bookworm + OpenJDK 17 JRE made with debootstrap (mirror
#      taken from this machine's apt sources), slimmed, kept as a rootfs tarball,
#      then `docker import`ed.
#   4. Kafka jars from Maven Central with `mvn dependency:copy-dependencies`
#      (docker/kafka-jars/{broker,tools}/pom.xml), kept per pom hash.
#   5. Our broker-side assignor (broker-assignor/, `mvn package`; its tests run in `make
#      test`), kept per source hash, added to the broker's libs/ and listed first in
#      group.consumer.assignors by entrypoint.sh.
#   6. `docker build` of docker/Dockerfile FROM the local base (legacy builder, COPY
#      steps only: no pull, no network).
#
# Environment:
#   KAFKA_ASSIGNORS_BUILD_IMAGE    tag to build (default kafka-assignors/kafka:4.4.0)
#   KAFKA_ASSIGNORS_BASE_IMAGE     tag of the base image (default kafka-assignors/base:bookworm-jre17)
#   KAFKA_ASSIGNORS_DEBIAN_MIRROR  Debian mirror URL for debootstrap (default: from apt sources)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/kafka-assignors"
IMAGE="${KAFKA_ASSIGNORS_BUILD_IMAGE:-kafka-assignors/kafka:4.4.0}"
BASE_RECIPE="debootstrap minbase bookworm openjdk-17-jre-headless v1"
BASE_IMAGE="${KAFKA_ASSIGNORS_BASE_IMAGE:-kafka-assignors/base:bookworm-jre17}"
BASE_TAR="$CACHE_DIR/base-bookworm-jre17.tar"
LABEL=io.kafka-assignors.recipe
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1

say() { echo "build-image: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$REPO/scripts/lib.sh"
started=$SECONDS

"$REPO/scripts/ensure-docker.sh"
mkdir -p "$CACHE_DIR"

# The broker-side assignor's sources (the jar is rebuilt when they change).
assignor_hash() {
    (
        cd "$REPO"
        find broker-assignor/pom.xml broker-assignor/src/main -type f -print0 \
            | LC_ALL=C sort -z | xargs -0 sha256sum
    ) | sha256sum | cut -c1-16
}
ASSIGNOR_HASH=$(assignor_hash)

# Everything the image is made of; a change to any of it rebuilds the image.
recipe_hash() {
    (
        cd "$HERE"
        echo "$BASE_RECIPE"
        echo "broker-assignor $ASSIGNOR_HASH"
        find Dockerfile entrypoint.sh build-image.sh config bin kafka-jars -type f -print0 \
            | LC_ALL=C sort -z | xargs -0 sha256sum
    ) | sha256sum | cut -c1-16
}
RECIPE=$(recipe_hash)

current=$(docker image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$IMAGE" 2>/dev/null || true)
if [[ $FORCE == 0 && "$current" == "$RECIPE" ]]; then
    say "$IMAGE is up to date (recipe $RECIPE)"
    exit 0
fi

# One build at a time (parallel test runs share the cache and the tag).
exec 9>"$CACHE_DIR/build.lock"
flock -w 1800 9 || die "another build holds $CACHE_DIR/build.lock for over 30 minutes"
current=$(docker image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$IMAGE" 2>/dev/null || true)
if [[ $FORCE == 0 && "$current" == "$RECIPE" ]]; then
    say "$IMAGE was built by a concurrent run"
    exit 0
fi
if [[ $FORCE == 1 ]]; then
    say "--force: rebuilding $IMAGE"
elif [[ -n "$current" ]]; then
    say "$IMAGE exists from another recipe ($current); rebuilding as $RECIPE"
fi

TMP_DIRS=()
cleanup() { ((${#TMP_DIRS[@]})) && rm -rf "${TMP_DIRS[@]}"; return 0; }
trap cleanup EXIT

# ---- 3. base image -----------------------------------------------------------------------
debian_mirror() {  # prints the Debian mirror URL this machine's apt uses
    if [[ -n "${KAFKA_ASSIGNORS_DEBIAN_MIRROR:-}" ]]; then
        echo "$KAFKA_ASSIGNORS_DEBIAN_MIRROR"
        return
    fi
    local found=""
    shopt -s nullglob
    # deb822 files: paragraphs with Types/URIs/Suites; prefer one whose Suites has bookworm.
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        found=$(awk '
            function flush() {
                if (!done && types ~ /(^| )deb( |$)/ && uris != "") {
                    n = split(suites, s, " ")
                    for (i = 1; i <= n; i++) if (s[i] == "bookworm") { split(uris, u, " "); print u[1]; done = 1; exit }
                }
                types = ""; uris = ""; suites = ""
            }
            /^[[:space:]]*$/ { flush(); next }
            /^[[:space:]]*#/ { next }
            tolower($1) == "types:"  { $1 = ""; types = $0 }
            tolower($1) == "uris:"   { $1 = ""; sub(/^ +/, ""); uris = $0 }
            tolower($1) == "suites:" { $1 = ""; suites = $0 }
            END { flush() }' "$f")
        [[ -n "$found" ]] && break
    done
    if [[ -z "$found" ]]; then
        # one-line format: deb [options] URI SUITE COMPONENTS...
        found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
            | sed -E 's/\[[^]]*\]//' \
            | awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }')
    fi
    if [[ -z "$found" ]]; then
        # No bookworm entry (e.g. a trixie host): any Debian archive mirror serves
        # every suite, so take the first URI that points at one.
        found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                    /etc/apt/sources.list.d/*.sources 2>/dev/null \
            | grep -oE '(https?)://[^ ]*/debian/?( |$)' | grep -v security | head -n 1 | tr -d ' ')
    fi
    shopt -u nullglob
    [[ -n "$found" ]] || die "no Debian bookworm mirror in /etc/apt/sources.list{,.d}; set KAFKA_ASSIGNORS_DEBIAN_MIRROR"
    echo "$found"
}

build_base_tar() {
    command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
    local mirror tmp t0=$SECONDS
    mirror=$(debian_mirror)
    tmp=$(mktemp -d "$CACHE_DIR/rootfs.XXXXXX")
    TMP_DIRS+=("$tmp")
    say "debootstrap bookworm + openjdk-17-jre-headless (about a minute; log: $CACHE_DIR/debootstrap.log) ..."
    as_root timeout 1200 debootstrap --variant=minbase --include=openjdk-17-jre-headless \
        bookworm "$tmp/root" "$mirror" >"$CACHE_DIR/debootstrap.log" 2>&1 || {
        tail -n 30 "$CACHE_DIR/debootstrap.log" >&2
        die "debootstrap failed (see $CACHE_DIR/debootstrap.log)"
    }
    # Slim: package caches, apt lists, docs, man pages, translations.
    as_root rm -rf "$tmp/root"/var/cache/apt/archives/*.deb "$tmp/root"/var/lib/apt/lists/* \
        "$tmp/root"/usr/share/doc/* "$tmp/root"/usr/share/man/* "$tmp/root"/usr/share/locale/* \
        "$tmp/root"/var/log/*.log
    as_root tar --numeric-owner -C "$tmp/root" -cf "$BASE_TAR.tmp" . || die "tar of the rootfs failed"
    as_root chown "$(id -u):$(id -g)" "$BASE_TAR.tmp"
    mv "$BASE_TAR.tmp" "$BASE_TAR"
    as_root rm -rf "$tmp"
    say "base rootfs cached: $BASE_TAR ($(du -h "$BASE_TAR" | cut -f1), $((SECONDS - t0)) s)"
}

base_current=$(docker image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$BASE_IMAGE" 2>/dev/null || true)
if [[ "$base_current" != "$BASE_RECIPE" ]]; then
    [[ -s "$BASE_TAR" ]] || build_base_tar
    say "importing $BASE_IMAGE from $BASE_TAR ..."
    docker import --change "LABEL $LABEL=\"$BASE_RECIPE\"" "$BASE_TAR" "$BASE_IMAGE" >/dev/null \
        || die "docker import of $BASE_TAR failed"
fi

# ---- 4. Kafka jars -------------------------------------------------------------------------
POM_HASH=$(cat "$HERE/kafka-jars/broker/pom.xml" "$HERE/kafka-jars/tools/pom.xml" | sha256sum | cut -c1-16)
JARS="$CACHE_DIR/jars-$POM_HASH"
if [[ ! -f "$JARS/.complete" ]]; then
    command -v mvn >/dev/null 2>&1 || apt_install maven
    command -v mvn >/dev/null 2>&1 || die "mvn (Maven) not found even after installing Debian's maven"
    t0=$SECONDS
    say "resolving Kafka jars from Maven Central ..."
    rm -rf "$JARS"
    for part in broker:libs tools:tools-libs; do
        timeout 900 mvn -B -f "$HERE/kafka-jars/${part%%:*}/pom.xml" dependency:copy-dependencies \
            -DincludeScope=runtime -DoutputDirectory="$JARS/${part#*:}" \
            >"$CACHE_DIR/mvn.log" 2>&1 || {
            grep -E 'ERROR|BUILD' "$CACHE_DIR/mvn.log" | head -n 20 >&2
            die "mvn dependency:copy-dependencies failed for kafka-jars/${part%%:*}/pom.xml (see $CACHE_DIR/mvn.log)"
        }
    done
    touch "$JARS/.complete"
    find "$CACHE_DIR" -maxdepth 1 -name 'jars-*' ! -name "jars-$POM_HASH" -exec rm -rf {} +
    say "jars cached: $JARS ($(du -sh "$JARS" | cut -f1), $((SECONDS - t0)) s)"
fi

# ---- 5. our broker-side assignor --------------------------------------------------------------
ASSIGNOR_JAR="$CACHE_DIR/kafka-assignors-broker-$ASSIGNOR_HASH.jar"
if [[ ! -s "$ASSIGNOR_JAR" ]]; then
    command -v javac >/dev/null 2>&1 || apt_install openjdk-17-jdk-headless
    command -v mvn >/dev/null 2>&1 || apt_install maven
    t0=$SECONDS
    say "building the broker-side assignor (broker-assignor/, mvn package) ..."
    build=$(mktemp -d "$CACHE_DIR/assignor.XXXXXX")
    TMP_DIRS+=("$build")
    # a copy, so a concurrent `mvn test` in the checkout does not share target/
    cp -a "$REPO/broker-assignor/pom.xml" "$REPO/broker-assignor/src" "$build/"
    timeout 900 mvn -B -q -f "$build/pom.xml" package -Dmaven.test.skip=true \
        >"$CACHE_DIR/mvn-assignor.log" 2>&1 || {
        grep -E 'ERROR|BUILD' "$CACHE_DIR/mvn-assignor.log" | head -n 20 >&2
        die "mvn package failed for broker-assignor/pom.xml (see $CACHE_DIR/mvn-assignor.log)"
    }
    cp "$build"/target/kafka-assignors-broker-*.jar "$ASSIGNOR_JAR.tmp"
    mv "$ASSIGNOR_JAR.tmp" "$ASSIGNOR_JAR"
    find "$CACHE_DIR" -maxdepth 1 -name 'kafka-assignors-broker-*.jar' ! -name "${ASSIGNOR_JAR##*/}" -delete
    say "assignor jar cached: $ASSIGNOR_JAR ($((SECONDS - t0)) s)"
fi

# ---- 6. the image ----------------------------------------------------------------------------
CTX=$(mktemp -d "$CACHE_DIR/context.XXXXXX")
TMP_DIRS+=("$CTX")
cp -al "$JARS/libs" "$CTX/libs" 2>/dev/null || cp -a "$JARS/libs" "$CTX/libs"
cp "$ASSIGNOR_JAR" "$CTX/libs/kafka-assignors-broker.jar"
cp -al "$JARS/tools-libs" "$CTX/tools-libs" 2>/dev/null || cp -a "$JARS/tools-libs" "$CTX/tools-libs"
cp -a "$HERE/config" "$CTX/config"
cp -a "$HERE/bin" "$CTX/bin"
cp "$HERE/entrypoint.sh" "$CTX/bin/entrypoint.sh"
chmod 0755 "$CTX"/bin/*
chmod -R a+rX "$CTX"
cp "$HERE/Dockerfile" "$CTX/Dockerfile"

say "docker build $IMAGE (recipe $RECIPE) ..."
DOCKER_BUILDKIT=0 timeout 900 docker build \
    --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    --label "$LABEL=$RECIPE" \
    --label "org.opencontainers.image.title=kafka-assignors Apache Kafka broker" \
    --label "org.opencontainers.image.version=4.4.0" \
    -t "$IMAGE" "$CTX" >"$CACHE_DIR/docker-build.log" 2>&1 || {
    tail -n 30 "$CACHE_DIR/docker-build.log" >&2
    die "docker build failed (see $CACHE_DIR/docker-build.log)"
}
# Drop the untagged leftovers of earlier recipes.
docker image prune -f --filter "label=$LABEL" >/dev/null 2>&1 || true
say "built $IMAGE in $((SECONDS - started)) s"
