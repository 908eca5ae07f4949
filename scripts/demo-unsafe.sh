#!/usr/bin/env bash
# Demo: the same fault schedule (same --seed) against weakened and against safe
# Kafka settings. The unsafe run should end INVALID (lost writes and/or
# duplicates in results.json), the safe run VALID. See docs/producer-state.md.
#
#   scripts/demo-unsafe.sh                      # a fresh local 3-node cluster "lt-demo-unsafe"
#   NODES_FILE=cluster.yaml scripts/demo-unsafe.sh   # an existing cluster (inventory)
#   SEED=7 TIME_LIMIT=60 NEMESIS=kill,partition scripts/demo-unsafe.sh
#
# Exit code: 0 when the unsafe run was found invalid and the safe one valid.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
PY=${PY:-.venv/bin/python}
SEED=${SEED:-7}
TIME_LIMIT=${TIME_LIMIT:-60}
NEMESIS=${NEMESIS:-kill,partition}
STORE=${STORE:-store}
CLUSTER=${CLUSTER:-lt-demo-unsafe}
common=(--nemesis "$NEMESIS" --nemesis-interval 8 --db-targets leader,one --seed "$SEED"
        --time-limit "$TIME_LIMIT" --rate 50 --concurrency 6 --recovery-time 5 --final-time-limit 60
        --store "$STORE")

made_cluster=""
if [ -z "${NODES_FILE:-}" ]; then
  NODES_FILE=$("$PY" - "$CLUSTER" <<'PYEOF'
import sys
from clusters.nodes.local import LocalCluster
local = LocalCluster(sys.argv[1])
if not local.exists():
    local.up(3)
print(local.inventory_path)
PYEOF
  ) || { echo "could not bring up local cluster $CLUSTER" >&2; exit 4; }
  made_cluster=$CLUSTER
fi
cleanup() {
  if [ -n "$made_cluster" ]; then
    "$PY" -c "import sys; from clusters.nodes.local import LocalCluster; LocalCluster(sys.argv[1]).down()" "$made_cluster"
  fi
}
trap cleanup EXIT

run() {  # run <preset>: prints the run's verdict line, returns its exit code
  "$PY" -m harness.cli test --nodes-file "$NODES_FILE" --preset "$1" --name "demo-$1" "${common[@]}"
}

echo "== unsafe settings (acks=1, no idempotence, min ISR 1, unclean election), seed $SEED"
run unsafe; unsafe_rc=$?
echo "== safe settings, same fault schedule (seed $SEED)"
run safe; safe_rc=$?

summary() {
  "$PY" - "$STORE/demo-$1" <<'PYEOF'
import json, sys
from pathlib import Path
runs = sorted(p for p in Path(sys.argv[1]).iterdir() if (p / "results.json").exists())
results = json.loads((runs[-1] / "results.json").read_text())
counts = {k: v["count"] for k, v in results.get("anomalies", {}).items()}
print(f"{runs[-1]}: valid={results.get('valid')} anomalies={counts} "
      f"producer_errors={results.get('stats', {}).get('producer_errors', {})}")
PYEOF
}
echo "== results"
summary unsafe
summary safe
[ "$unsafe_rc" -eq 1 ] && [ "$safe_rc" -eq 0 ]
