#!/usr/bin/env bash
# Builds tansu (the pinned version, PostgreSQL storage) with `cargo install --locked`
# into ~/.cache/logtrial/tansu-<version>-build/ and derives its PostgreSQL schema, once:
# a cached build is reused. The first build took about 20 min on 2 cores (docs/cluster.md).
#   scripts/install-tansu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:$HOME/.cargo/bin"
exec "${PYTHON:-python3}" -m clusters.tansu_install "$@"
