#!/usr/bin/env bash
# Runs a Kafka command line tool: kafka-tool.sh MAIN_CLASS [ARGS...]
# Tools use their own classpath (tools-libs, see docker/kafka-jars/tools/pom.xml)
# and log warnings to stderr. KAFKA_OPTS is passed to the JVM (e.g. SASL settings).
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: kafka-tool.sh MAIN_CLASS [ARGS...]" >&2; exit 2; }
main=$1
shift
# shellcheck disable=SC2086  # KAFKA_*_OPTS are word lists on purpose
exec java ${KAFKA_TOOLS_HEAP_OPTS:--Xmx256m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dlog4j2.configurationFile=/opt/kafka/config/tools-log4j2.properties \
    ${KAFKA_OPTS:-} -cp '/opt/kafka/tools-libs/*' "$main" "$@"
