#!/usr/bin/env bash
# Builds the KRaft Apache Kafka broker image without any container registry.
#
#   docker/build-image.sh [--force]               (in a checkout; runs this file)
#   KAFKA_VERSION=3.9.2 docker/build-image.sh     any Apache Kafka >= 3.9 on Maven Central
#
# This recipe (the folder holding this script) ships in the Python package, so that
# `kafka-assignors demo` builds the same image from a pip install (kafka_assignors.embedded.image
# runs it); nothing here reads the checkout except the broker plugin's sources, when there.
#
# Steps (each cached under ${XDG_CACHE_HOME:-$HOME/.cache}/kafka-assignors/):
#   1. ensure-docker.sh (installs/starts the engine when needed).
#   2. If the image exists and was built from this same recipe (label
#      io.kafka-assignors.recipe = hash of the files in this folder), stop: ~0.2 s.
#   3. Base image: Debian bookworm + OpenJDK 17 JRE made with debootstrap (mirror
#      taken from this machine's apt sources), slimmed, kept as a rootfs tarball,
#      then `docker import`ed.
#   4. Kafka jars from Maven Central with `mvn dependency:copy-dependencies`
#      (kafka-jars/broker/pom.xml with -Dkafka.version=KAFKA_VERSION, kept per pom
#      hash and version; kafka-jars/tools/pom.xml, one tools set for every version).
#   5. Our broker-side assignor, compiled against the oldest 4.x api so one jar serves every
#      4.x, added to the broker's libs/ (Kafka >= 4.0 only: 3.x has no plugin api) and
#      listed first in group.consumer.assignors by entrypoint.sh. The jar is, in this order:
#      KAFKA_ASSIGNORS_BROKER_JAR; built from a checkout's broker-assignor/ (`mvn package`,
#      kept per source hash; its tests run in `make test`) when this recipe is inside one;
#      the jar a release ships beside this script (jars/, put there by scripts/dist.sh).
#   6. `docker build` of docker/Dockerfile FROM the local base (legacy builder, COPY
#      steps only: no pull, no network).
#
# Environment:
#   KAFKA_VERSION                  Apache Kafka version of the broker (default 4.4.0)
#   KAFKA_ASSIGNORS_BUILD_IMAGE    tag to build (default kafka-assignors/kafka:KAFKA_VERSION)
#   KAFKA_ASSIGNORS_BASE_IMAGE     tag of the base image (default kafka-assignors/base:bookworm-jre17)
#   KAFKA_ASSIGNORS_DEBIAN_MIRROR  Debian mirror URL for debootstrap (default: from apt sources)
#   KAFKA_ASSIGNORS_BROKER_JAR     the broker plugin jar to put in 4.x images (default: see 5.)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The checkout this recipe sits in (kafka_assignors/embedded/recipe/), if it is in one.
CHECKOUT=$(cd "$HERE/../../.." && pwd)
[[ -f "$CHECKOUT/broker-assignor/pom.xml" ]] || CHECKOUT=""
PACKAGE_VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$HERE/../../_version.py" 2>/dev/null || true)
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/kafka-assignors"
DEFAULT_KAFKA_VERSION=4.4.0
KAFKA_VERSION="${KAFKA_VERSION:-$DEFAULT_KAFKA_VERSION}"
IMAGE="${KAFKA_ASSIGNORS_BUILD_IMAGE:-kafka-assignors/kafka:$KAFKA_VERSION}"
BASE_RECIPE="debootstrap minbase bookworm openjdk-17-jre-headless v1"
BASE_IMAGE="${KAFKA_ASSIGNORS_BASE_IMAGE:-kafka-assignors/base:bookworm-jre17}"
BASE_TAR="$CACHE_DIR/base-bookworm-jre17.tar"
LABEL=io.kafka-assignors.recipe
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1

say() { echo "build-image: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=kafka_assignors/embedded/recipe/lib.sh
source "$HERE/lib.sh"
started=$SECONDS

[[ "$KAFKA_VERSION" =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] \
    || die "KAFKA_VERSION=$KAFKA_VERSION: expected MAJOR.MINOR.PATCH (e.g. 3.9.2, 4.0.2)"
KAFKA_MAJOR=${BASH_REMATCH[1]}
KAFKA_MINOR=${BASH_REMATCH[2]}
((KAFKA_MAJOR > 3 || (KAFKA_MAJOR == 3 && KAFKA_MINOR >= 9))) \
    || die "KAFKA_VERSION=$KAFKA_VERSION: this image supports Apache Kafka 3.9 and later"
# The KIP-848 plugin api (org.apache.kafka.coordinator.group.api.assignor) exists from 4.0.
WITH_ASSIGNOR=0
((KAFKA_MAJOR >= 4)) && WITH_ASSIGNOR=1

bash "$HERE/ensure-docker.sh"
mkdir -p "$CACHE_DIR"

# Where the broker-side assignor comes from (see 5. above), and its hash: of the jar given or
# shipped, else of the checkout's sources (the jar is rebuilt when they change).
ASSIGNOR_FROM=""
ASSIGNOR_HASH=none
if ((WITH_ASSIGNOR)); then
    if [[ -n "${KAFKA_ASSIGNORS_BROKER_JAR:-}" ]]; then
        [[ -s "$KAFKA_ASSIGNORS_BROKER_JAR" ]] \
            || die "KAFKA_ASSIGNORS_BROKER_JAR=$KAFKA_ASSIGNORS_BROKER_JAR: no such jar"
        ASSIGNOR_FROM=$KAFKA_ASSIGNORS_BROKER_JAR
    elif [[ -n "$CHECKOUT" ]]; then
        ASSIGNOR_FROM=checkout
    else
        shopt -s nullglob
        shipped=("$HERE"/jars/kafka-assignors-broker-*.jar)
        shopt -u nullglob
        ((${#shipped[@]})) || die "this installation has no broker plugin jar ($HERE/jars/ is empty: \
a package built without scripts/dist.sh); set KAFKA_ASSIGNORS_BROKER_JAR to one, or \
KAFKA_VERSION=3.9.2 for a broker without it"
        ASSIGNOR_FROM=${shipped[0]}
    fi
    if [[ $ASSIGNOR_FROM == checkout ]]; then
        ASSIGNOR_HASH=$(
            cd "$CHECKOUT"
            find broker-assignor/pom.xml broker-assignor/src/main -type f -print0 \
                | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
        )
    else
        ASSIGNOR_HASH=$(sha256sum <"$ASSIGNOR_FROM" | cut -c1-16)
    fi
fi

# Everything the image is made of; a change to any of it rebuilds the image.
recipe_hash() {
    (
        cd "$HERE"
        echo "$BASE_RECIPE"
        echo "kafka $KAFKA_VERSION"
        ((WITH_ASSIGNOR)) && echo "broker-assignor $ASSIGNOR_HASH"
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
# jars-<pom hash>-<version>/libs (the broker) and tools-<pom hash>/tools-libs (one set of
# command line tools, on their own classpath, for every broker version).
fetch_jars() {  # fetch_jars POM DEST_DIR [MVN_ARGS...]: copy a pom's runtime jars to DEST_DIR
    local pom=$1 dest=$2 t0=$SECONDS
    shift 2
    command -v mvn >/dev/null 2>&1 || apt_install maven
    command -v mvn >/dev/null 2>&1 || die "mvn (Maven) not found even after installing Debian's maven"
    say "resolving ${pom#"$HERE"/} $* from Maven Central ..."
    rm -rf "$dest" "$dest.tmp"
    mkdir -p "$(dirname "$dest")"
    timeout 900 mvn -B -f "$pom" dependency:copy-dependencies "$@" \
        -DincludeScope=runtime -DoutputDirectory="$dest.tmp" >"$dest.log" 2>&1 || {
        grep -E 'ERROR|BUILD' "$dest.log" | head -n 20 >&2
        rm -rf "$dest.tmp"
        die "mvn dependency:copy-dependencies failed for ${pom#"$HERE"/} $* (see $dest.log)"
    }
    mv "$dest.tmp" "$dest"
    say "jars cached: $dest ($(du -sh "$dest" | cut -f1), $((SECONDS - t0)) s)"
}
BROKER_POM_HASH=$(sha256sum <"$HERE/kafka-jars/broker/pom.xml" | cut -c1-16)
TOOLS_POM_HASH=$(sha256sum <"$HERE/kafka-jars/tools/pom.xml" | cut -c1-16)
JARS="$CACHE_DIR/jars-$BROKER_POM_HASH-$KAFKA_VERSION"
TOOLS="$CACHE_DIR/tools-$TOOLS_POM_HASH"
[[ -d "$JARS/libs" ]] || fetch_jars "$HERE/kafka-jars/broker/pom.xml" "$JARS/libs" \
    "-Dkafka.version=$KAFKA_VERSION"
[[ -d "$TOOLS/tools-libs" ]] || fetch_jars "$HERE/kafka-jars/tools/pom.xml" "$TOOLS/tools-libs"
# Drop the jars of earlier poms (other versions of the same pom stay).
find "$CACHE_DIR" -maxdepth 1 \( -name 'jars-*-*' ! -name "jars-$BROKER_POM_HASH-*" \) \
    -exec rm -rf {} + 2>/dev/null || true
find "$CACHE_DIR" -maxdepth 1 \( -name 'tools-*' ! -name "tools-$TOOLS_POM_HASH" \) \
    -exec rm -rf {} + 2>/dev/null || true

# ---- 5. our broker-side assignor --------------------------------------------------------------
ASSIGNOR_JAR="$CACHE_DIR/kafka-assignors-broker-$ASSIGNOR_HASH.jar"
if ((WITH_ASSIGNOR)) && [[ $ASSIGNOR_FROM != checkout ]]; then
    ASSIGNOR_JAR=$ASSIGNOR_FROM
    say "broker-side assignor: $ASSIGNOR_JAR"
elif ((WITH_ASSIGNOR)) && [[ ! -s "$ASSIGNOR_JAR" ]]; then
    command -v javac >/dev/null 2>&1 || apt_install openjdk-17-jdk-headless
    command -v mvn >/dev/null 2>&1 || apt_install maven
    t0=$SECONDS
    say "building the broker-side assignor (broker-assignor/, mvn package) ..."
    build=$(mktemp -d "$CACHE_DIR/assignor.XXXXXX")
    TMP_DIRS+=("$build")
    # a copy, so a concurrent `mvn test` in the checkout does not share target/
    cp -a "$CHECKOUT/broker-assignor/pom.xml" "$CHECKOUT/broker-assignor/src" "$build/"
    timeout 900 mvn -B -q -f "$build/pom.xml" package -Dmaven.test.skip=true \
        ${PACKAGE_VERSION:+"-Drevision=$PACKAGE_VERSION"} \
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
((WITH_ASSIGNOR)) && cp "$ASSIGNOR_JAR" "$CTX/libs/kafka-assignors-broker.jar"
cp -al "$TOOLS/tools-libs" "$CTX/tools-libs" 2>/dev/null || cp -a "$TOOLS/tools-libs" "$CTX/tools-libs"
cp -a "$HERE/config" "$CTX/config"
cp -a "$HERE/bin" "$CTX/bin"
cp "$HERE/entrypoint.sh" "$CTX/bin/entrypoint.sh"
chmod 0755 "$CTX"/bin/*
chmod -R a+rX "$CTX"
cp "$HERE/Dockerfile" "$CTX/Dockerfile"

say "docker build $IMAGE (recipe $RECIPE) ..."
DOCKER_BUILDKIT=0 timeout 900 docker build \
    --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    --build-arg "KAFKA_VERSION=$KAFKA_VERSION" \
    --label "$LABEL=$RECIPE" \
    --label "org.opencontainers.image.title=kafka-assignors Apache Kafka broker" \
    --label "org.opencontainers.image.version=$KAFKA_VERSION" \
    -t "$IMAGE" "$CTX" >"$CACHE_DIR/docker-build-$KAFKA_VERSION.log" 2>&1 || {
    tail -n 30 "$CACHE_DIR/docker-build-$KAFKA_VERSION.log" >&2
    die "docker build failed (see $CACHE_DIR/docker-build-$KAFKA_VERSION.log)"
}
# Drop the untagged leftovers of earlier recipes.
docker image prune -f --filter "label=$LABEL" >/dev/null 2>&1 || true
say "built $IMAGE in $((SECONDS - started)) s"
