#!/usr/bin/env bash
# Same name as in the Apache Kafka distribution and the official image.
exec /opt/kafka/bin/kafka-tool.sh org.apache.kafka.tools.ConsoleProducer "$@"
