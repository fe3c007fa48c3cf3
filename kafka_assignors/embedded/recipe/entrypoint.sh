#!/usr/bin/env bash
# Entrypoint of the kafka-assignors broker image (KRaft mode, Apache Kafka 3.9 or 4.x:
# KAFKA_VERSION is set by the image, see build-image.sh).
#
# Configuration follows the official apache/kafka image's convention, so the same
# container environment works with both images:
#   * every KAFKA_X_Y variable becomes property x.y (lower case): "_" -> ".",
#     "__" -> "_", "___" -> "-"  (e.g. KAFKA_BROKER_RACK=r1 -> broker.rack=r1,
#     KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG=... ->
#     listener.name.sasl_plaintext.plain.sasl.jaas.config=...), except the JVM/
#     logging variables listed in NOT_PROPERTIES below;
#   * CLUSTER_ID is the KRaft cluster id used to format storage on first start;
#   * if /mnt/shared/config/server.properties exists, the variables are appended to it;
#   * NAME=VALUE arguments override the environment.
# Unset variables get single-node defaults (a combined broker+controller on
# localhost:9092/9093, internal topics with replication factor 1, no initial
# rebalance delay), so `docker run -p 127.0.0.1:9092:9092 IMAGE` just works.
#
# Extras of this image (not in the official one):
#   group.consumer.assignors defaults to our balanced-sticky, then uniform and range
#                              (KAFKA_GROUP_CONSUMER_ASSIGNORS=uniform,range: Kafka's default);
#                              on Kafka 3.9 it keeps Kafka's default: the jar needs the 4.x
#                              plugin api, and 3.9 runs classic groups only unless
#                              KAFKA_GROUP_COORDINATOR_REBALANCE_PROTOCOLS=classic,consumer
#                              (KIP-848 early access there)
#   STORAGE_FORMAT_EXTRA_ARGS  more arguments for `kafka-storage format`
#                              (e.g. --add-scram 'SCRAM-SHA-256=[name=u,password=p]')
#   KAFKA_HEAP_OPTS defaults to a small heap (-Xmx512m): we run up to 3 brokers on 2 cores.
set -euo pipefail

CONFIG_DIR=/opt/kafka/config
PROPS="$CONFIG_DIR/server.properties"
USER_PROPS=/mnt/shared/config/server.properties

log() { echo "[entrypoint] $*"; }
die() { echo "[entrypoint] ERROR: $*" >&2; exit 1; }

for arg in "$@"; do
    [[ "$arg" == *=* ]] || die "unexpected argument '$arg' (only NAME=VALUE overrides are accepted)"
    export "${arg?}"
done

default() {  # default NAME VALUE: export NAME=VALUE unless NAME is set and non-empty
    if [[ -z "${!1:-}" ]]; then
        export "$1=$2"
        log "$1 not set, using default: $2"
    fi
}

# ---- the broker's version ----------------------------------------------------------------
kafka_major=4
if [[ "${KAFKA_VERSION:-}" =~ ^([0-9]+)\.([0-9]+)\. ]]; then
    kafka_major=${BASH_REMATCH[1]}
fi
log "Apache Kafka ${KAFKA_VERSION:-(version not set, assuming 4.x)}"
kafka4=false; ((kafka_major >= 4)) && kafka4=true

# ---- defaults -------------------------------------------------------------------------
default CLUSTER_ID "jegtZTWcSGGUu_b5Hmtjng"
default KAFKA_NODE_ID 1
default KAFKA_PROCESS_ROLES "broker,controller"
default KAFKA_CONTROLLER_LISTENER_NAMES CONTROLLER
default KAFKA_LISTENER_SECURITY_PROTOCOL_MAP \
    "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"

roles=",${KAFKA_PROCESS_ROLES// /},"
is_broker=false; [[ "$roles" == *,broker,* ]] && is_broker=true
is_controller=false; [[ "$roles" == *,controller,* ]] && is_controller=true

if ! $is_broker && [[ -n "${KAFKA_ADVERTISED_LISTENERS:-}" ]]; then
    die "KAFKA_ADVERTISED_LISTENERS is not supported on a KRaft controller-only node"
fi
if [[ -z "${KAFKA_LISTENERS:-}" ]]; then
    if $is_broker && [[ -n "${KAFKA_ADVERTISED_LISTENERS:-}" ]]; then
        # As in the official image: listen on every advertised port, on all interfaces
        # of the container's network namespace.
        KAFKA_LISTENERS=$(sed -e 's|://[^:]*:|://0.0.0.0:|g' <<<"$KAFKA_ADVERTISED_LISTENERS")
        if $is_controller && [[ "$KAFKA_LISTENERS" != *CONTROLLER://* ]]; then
            KAFKA_LISTENERS="$KAFKA_LISTENERS,CONTROLLER://localhost:9093"
        fi
        export KAFKA_LISTENERS
        log "KAFKA_LISTENERS derived from KAFKA_ADVERTISED_LISTENERS: $KAFKA_LISTENERS"
    else
        listeners=()
        $is_broker && listeners+=("PLAINTEXT://:9092")
        $is_controller && listeners+=("CONTROLLER://localhost:9093")
        default KAFKA_LISTENERS "$(IFS=,; echo "${listeners[*]}")"
        $is_broker && default KAFKA_ADVERTISED_LISTENERS "PLAINTEXT://localhost:9092"
    fi
fi
if [[ -z "${KAFKA_CONTROLLER_QUORUM_BOOTSTRAP_SERVERS:-}" ]]; then
    default KAFKA_CONTROLLER_QUORUM_VOTERS "${KAFKA_NODE_ID}@localhost:9093"
fi
default KAFKA_LOG_DIRS /var/lib/kafka/data
default KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR 1
default KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR 1
default KAFKA_TRANSACTION_STATE_LOG_MIN_ISR 1
default KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS 0
if $kafka4; then
    # Share groups (KIP-932) have their own state topic from 4.0.
    default KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR 1
    default KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR 1
    # KIP-848 consumer groups: our balanced-sticky (libs/kafka-assignors-broker.jar) is the
    # default; clients may pick uniform or range with group.remote.assignor.
    default KAFKA_GROUP_CONSUMER_ASSIGNORS "io.github.kafkaassignors.broker.BalancedStickyAssignor,uniform,range"
else
    # Kafka 3.9: share-group settings are unknown there (dropped, so the log shows no
    # warnings for them), and the jar is not in libs/.
    unset KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR
    if [[ "${KAFKA_GROUP_CONSUMER_ASSIGNORS:-}" == *io.github.kafkaassignors* ]]; then
        die "KAFKA_GROUP_CONSUMER_ASSIGNORS names our assignor, which needs Kafka >= 4.0 (this is $KAFKA_VERSION)"
    fi
fi

# ---- KAFKA_* -> server.properties ------------------------------------------------------
NOT_PROPERTIES=" KAFKA_VERSION KAFKA_HEAP_OPTS KAFKA_LOG4J_OPTS KAFKA_OPTS KAFKA_JMX_OPTS \
KAFKA_JVM_PERFORMANCE_OPTS KAFKA_GC_LOG_OPTS KAFKA_LOG4J_ROOT_LOGLEVEL KAFKA_LOG4J_LOGGERS \
KAFKA_TOOLS_LOG4J_LOGLEVEL KAFKA_TOOLS_HEAP_OPTS KAFKA_HOME KAFKA_DEBUG "

to_property() {  # KAFKA_A_B__C___D -> a.b_c-d
    local key=${1#KAFKA_}
    key=${key//___/-}
    key=${key//__/$'\x01'}
    key=${key//_/.}
    key=${key//$'\x01'/_}
    echo "${key,,}"
}

mkdir -p "$CONFIG_DIR"
{
    if [[ -f "$USER_PROPS" ]]; then
        cat "$USER_PROPS"
        echo
    fi
    echo "# Generated by entrypoint.sh from the KAFKA_* environment variables."
    while read -r name; do
        [[ "$name" == KAFKA_* ]] || continue
        [[ "$NOT_PROPERTIES" == *" $name "* ]] && continue
        echo "$(to_property "$name")=${!name}"
    done < <(compgen -e | LC_ALL=C sort)
} >"$PROPS"

log "server.properties (secrets masked):"
sed -E 's/^([^=]*(password|secret|jaas\.config|credentials)[^=]*)=.*/\1=******/I; s/^/    /' "$PROPS"

# ---- format storage on first start -----------------------------------------------------
log_dirs=$(sed -n 's/^log\.dirs=//p' "$PROPS" | tail -n 1)
meta_dir=$(sed -n 's/^metadata\.log\.dir=//p' "$PROPS" | tail -n 1)
first_dir=${meta_dir:-${log_dirs%%,*}}
if [[ -n "$first_dir" && -f "$first_dir/meta.properties" ]]; then
    log "storage in $first_dir already formatted"
else
    log "formatting storage (cluster id $CLUSTER_ID) ..."
    # shellcheck disable=SC2086  # extra args are a word list on purpose
    /opt/kafka/bin/kafka-storage.sh format --config "$PROPS" --cluster-id "$CLUSTER_ID" \
        --ignore-formatted ${STORAGE_FORMAT_EXTRA_ARGS:-} \
        || die "storage format failed"
fi

# ---- start the broker ------------------------------------------------------------------
: "${KAFKA_HEAP_OPTS:=-Xmx512m -Xms128m}"
: "${KAFKA_JVM_PERFORMANCE_OPTS:=-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true}"
: "${KAFKA_LOG4J_OPTS:=-Dlog4j2.configurationFile=$CONFIG_DIR/log4j2.properties}"
log "starting kafka.Kafka (node ${KAFKA_NODE_ID}, roles ${KAFKA_PROCESS_ROLES}${KAFKA_BROKER_RACK:+, rack $KAFKA_BROKER_RACK})"
# shellcheck disable=SC2086  # *_OPTS are word lists on purpose
exec java $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS ${KAFKA_GC_LOG_OPTS:-} ${KAFKA_JMX_OPTS:-} \
    $KAFKA_LOG4J_OPTS ${KAFKA_OPTS:-} -cp '/opt/kafka/libs/*' kafka.Kafka "$PROPS"
