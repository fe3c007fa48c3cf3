#!/usr/bin/env bash
# Make sure a Docker engine answers `docker info`, installing and starting one if needed.
#
#   scripts/ensure-docker.sh            # idempotent; ~0.1 s when the engine already runs
#
# 1. If `docker info` answers, stop here.
# 2. If the engine (dockerd) or debootstrap is missing, install the Debian packages
#    `docker.io` and `debootstrap` (apt-get update + install; as root or via sudo).
# 3. Start dockerd in the background (its own session, so Ctrl-C on the caller does
#    not stop it), logging to ${XDG_CACHE_HOME:-$HOME/.cache}/kafka-assignors/dockerd.log.
#    If it does not come up, retry with fallbacks: the vfs storage driver (for
#    kernels/filesystems without overlayfs), then also without iptables/bridge setup
#    (our containers use host networking, so no bridge is needed).
# 4. Wait (bounded) for `docker info`; on failure print the end of dockerd's log and
#    exit 1 with the reason.
#
# Environment:
#   KAFKA_ASSIGNORS_DOCKERD_TIMEOUT   seconds to wait for each start attempt (default 40)
#   KAFKA_ASSIGNORS_NO_INSTALL=1      never apt-get install; fail if missing instead
set -euo pipefail

CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/kafka-assignors"
LOG="$CACHE_DIR/dockerd.log"
PIDFILE="$CACHE_DIR/dockerd.pid"
START_TIMEOUT="${KAFKA_ASSIGNORS_DOCKERD_TIMEOUT:-40}"

say() { echo "ensure-docker: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

engine_up() { timeout 10 docker info >/dev/null 2>&1; }

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if command -v docker >/dev/null 2>&1 && engine_up; then
    exit 0
fi

# --- 2. install what is missing -------------------------------------------------------
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker >/dev/null 2>&1 || [[ " ${missing[*]-} " == *" docker.io "* ]] || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if ((${#missing[@]})); then
    apt_install "${missing[@]}"
    # docker.io recommends but does not depend on these; the engine needs them here.
    (apt_install iptables ca-certificates) || say "continuing without iptables/ca-certificates"
fi
command -v dockerd >/dev/null 2>&1 || die "dockerd not found even after installing docker.io"
command -v docker >/dev/null 2>&1 || die "docker client not found even after installing docker.io"

# A DOCKER_HOST that is not the local default socket is somebody else's engine: we
# cannot start it, so say so instead of starting a second one.
if [[ -n "${DOCKER_HOST:-}" && "${DOCKER_HOST}" != "unix:///var/run/docker.sock" ]]; then
    die "DOCKER_HOST=${DOCKER_HOST} does not answer 'docker info'; start that engine, or unset DOCKER_HOST"
fi

mkdir -p "$CACHE_DIR"

# A dockerd we started earlier may still be coming up: give it a chance first.
if [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    say "dockerd (pid $(cat "$PIDFILE")) is running but not answering yet; waiting ..."
    for _ in $(seq 1 "$START_TIMEOUT"); do
        engine_up && exit 0
        kill -0 "$(cat "$PIDFILE")" 2>/dev/null || break
        sleep 1
    done
    engine_up && exit 0
    die "dockerd (pid $(cat "$PIDFILE")) runs but does not answer 'docker info' after ${START_TIMEOUT}s; see $LOG"
fi
if pgrep -x dockerd >/dev/null 2>&1; then
    say "a dockerd started by someone else is running but 'docker info' fails; waiting ${START_TIMEOUT}s ..."
    for _ in $(seq 1 "$START_TIMEOUT"); do engine_up && exit 0; sleep 1; done
    die "the running dockerd does not answer 'docker info'; fix or stop it (see its own log)"
fi

# --- 3. start it, with fallbacks ------------------------------------------------------
try_start() {  # args: extra dockerd flags; returns 0 when `docker info` answers
    local pid
    say "starting dockerd ${*:-(default flags)}; log: $LOG"
    {
        echo
        echo "===== $(date -u +%FT%TZ) dockerd $* ====="
    } >>"$LOG"
    [[ "${_ROOT_PREFIX[*]-}" == needs-root ]] \
        && die "need root to start dockerd (run as root, or start Docker yourself)"
    # Not a function call, so that $! is dockerd itself (setsid execs it in place).
    "${_ROOT_PREFIX[@]}" setsid dockerd "$@" >>"$LOG" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$PIDFILE"
    for _ in $(seq 1 "$START_TIMEOUT"); do
        if engine_up; then
            say "Docker engine is up (pid $pid)"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    say "dockerd did not come up with flags: ${*:-(default)}"
    if kill -0 "$pid" 2>/dev/null; then
        as_root kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        as_root kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$PIDFILE"
    return 1
}

try_start \
    || try_start --storage-driver=vfs \
    || try_start --storage-driver=vfs --iptables=false --ip-masq=false --bridge=none \
    || {
        say "---- last 40 lines of $LOG ----"
        tail -n 40 "$LOG" >&2 || true
        die "could not start the Docker engine (three attempts, ${START_TIMEOUT}s each). Integration tests and the demo need it."
    }
