#!/usr/bin/env bash
# The nightly run, as .github/workflows/nightly.yml does it: install, a short
# test-all matrix on a local cluster, the static index. Runs the same here.
#
# Environment:
#   NIGHTLY_STORE        where runs go (default store/nightly)
#   NIGHTLY_QUICK=1      one short run (queue, partition, no txn) instead of the matrix
#   NIGHTLY_NODES_FILE   use this cluster's inventory instead of a local cluster per run
#   NIGHTLY_KAFKA_VERSIONS  e.g. 3.0.0,3.9.1,4.1.1: the matrix on each version (local clusters;
#                        versions other than 4.1.1 are fetched from Maven Central on first use)
#   NIGHTLY_SKIP_INSTALL=1  skip `make install` (already done)
# A matrix the store holds unfinished (STORE/matrix.json: the control node died during
# it) is resumed with `test-all --resume` rather than started over.
# Exit status: test-all's (0 only if every run is valid).
set -uo pipefail
cd "$(dirname "$0")/.."
STORE=${NIGHTLY_STORE:-store/nightly}
PY=${PYTHON:-.venv/bin/python}

if [ -z "${NIGHTLY_SKIP_INSTALL:-}" ]; then
  make install || exit 4
fi

if [ -n "${NIGHTLY_QUICK:-}" ]; then
  matrix=(--workloads queue --nemeses partition --txn off --time-limit 8 --recovery-time 2
          --final-time-limit 30 --concurrency 4 --rate 40 --nemesis-interval 3)
else
  matrix=(--workloads queue,list-append --nemeses none,partition,pause,kill,clock --txn both
          --time-limit 30 --recovery-time 5)
fi
if [ -n "${NIGHTLY_NODES_FILE:-}" ]; then
  cluster=(--nodes-file "$NIGHTLY_NODES_FILE" --leave-db-running)
else
  cluster=(--local 3)
fi
if [ -n "${NIGHTLY_KAFKA_VERSIONS:-}" ]; then
  cluster+=(--kafka-versions "$NIGHTLY_KAFKA_VERSIONS")
fi

mkdir -p "$STORE"
if "$PY" -m harness.matrix_journal "$STORE"; then
  # last night's matrix stopped before its end (the control node died): go on with it,
  # its finished cells kept, the one under way run again (its options are in matrix.json)
  echo "nightly: resuming the unfinished matrix in $STORE"
  "$PY" -m harness.cli test-all --resume "$STORE"
else
  "$PY" -m harness.cli test-all --store "$STORE" --junit "$STORE/junit.xml" "${matrix[@]}" "${cluster[@]}"
fi
status=$?
# test-all writes the index itself; write it again in case it died before the end
"$PY" -m harness.cli index --store "$STORE" >/dev/null || true
echo "nightly: exit $status, store $STORE, index $STORE/index.html"
exit $status
