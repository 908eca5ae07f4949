#!/usr/bin/env bash
# `make demo`: a 3-node local Kafka cluster, one acks=all round trip, then tear-down.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
name=demo
$py -m harness.cli cluster down --name "$name" >/dev/null 2>&1 || true  # a stale one
trap '$py -m harness.cli cluster down --name "$name" >/dev/null' EXIT
$py -m harness.cli cluster up --name "$name" --nodes 3
$py -m harness.demo --name "$name"
