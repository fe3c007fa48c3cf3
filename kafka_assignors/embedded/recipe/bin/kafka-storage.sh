#!/usr/bin/env bash
# Same name as in the Apache Kafka distribution: formats/inspects KRaft storage.
# Runs on the broker's own classpath (the tool ships with the broker jar).
# shellcheck disable=SC2086
exec java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dlog4j2.configurationFile=/opt/kafka/config/tools-log4j2.properties \
    ${KAFKA_OPTS:-} -cp '/opt/kafka/libs/*' kafka.tools.StorageTool "$@"
