#!/usr/bin/env bash
# Builds tansu (the pinned version, PostgreSQL storage) with `cargo install --locked`
# into ~/.cache/logtrial/tansu-<version>-<key>/ and derives its PostgreSQL schema, once:
# a cached build is reused. `make tansu` runs this; `--db tansu` builds on first use
# the same way (clusters/tansu/install.py; how long it takes: docs/cluster.md).
#   scripts/install-tansu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:$HOME/.cargo/bin"
exec "${PYTHON:-python3}" -m clusters.tansu.install "$@"
