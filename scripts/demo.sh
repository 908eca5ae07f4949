#!/usr/bin/env bash
# `make demo`: a short queue test with faults on a local 3-node cluster, then
# prints where the report is. The local cluster (lt-local) is taken down at the
# end; set DEMO_KEEP=1 to leave it running for a quicker second demo.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
py=.venv/bin/python
store=${DEMO_STORE:-store}

nemesis=partition,pause
keep=()
[ "${DEMO_KEEP:-0}" = 1 ] && keep=(--leave-db-running)

echo "logtrial demo: queue workload, faults: $nemesis, 30 s on a local 3-node cluster"
set +e
$py -m harness.cli test --local 3 --workload queue --nemesis "$nemesis" --nemesis-interval 8 \
  --time-limit 30 --rate 200 --concurrency 10 --recovery-time 5 --final-time-limit 60 \
  --store "$store" "${keep[@]}"
code=$?
set -e
run=$(readlink -f "$store/latest")
echo
echo "run directory: $run"
if [ -f "$run/report.html" ]; then
  echo "report:        $run/report.html"
fi
echo "exit code:     $code (0 valid, 1 invalid, 2 unknown, 4 harness error, 130 interrupted)"
# a demo is a success when the run completed, whatever the verdict on Kafka
grep -q '"status": "complete"' "$run/test.json"
