#!/usr/bin/env bash
# Assembles one Kafka version's jars from Maven Central into a cache outside the repo
# (default: the version logtrial runs unless told otherwise). Idempotent: a complete
# cache is left alone. Other versions are fetched on first use; see docs/cluster.md.
#   scripts/install-kafka.sh [VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" -m clusters.kafka.install "$@"
