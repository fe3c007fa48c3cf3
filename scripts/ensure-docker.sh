#!/usr/bin/env bash
# Make sure a Docker engine answers `docker info`, installing and starting one if needed.
# The script ships in the package (the demo runs it from a pip install):
# kafka_assignors/embedded/recipe/ensure-docker.sh.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../kafka_assignors/embedded/recipe/ensure-docker.sh" "$@"
