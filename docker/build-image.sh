#!/usr/bin/env bash
# Builds the KRaft Apache Kafka broker image without any container registry.
#
#   docker/build-image.sh [--force]
#   KAFKA_VERSION=3.9.2 docker/build-image.sh     any Apache Kafka >= 3.9 on Maven Central
#
# The recipe ships in the package, so that `kafka-assignors demo` builds the same image from a
# pip install: kafka_assignors/embedded/recipe/ (see its build-image.sh and docker/README.md).
exec bash "$(dirname "${BASH_SOURCE[0]}")/../kafka_assignors/embedded/recipe/build-image.sh" "$@"
