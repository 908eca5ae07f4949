"""The late-batch campaign of docs/findings.md: N short `logtrial test` runs of the
queue workload with transactions under the client-delay fault, on one running local
cluster, for one cell (client x transaction version); per run the counts that matter
and, for every lost write, what the partition's log holds at its offset.

    python scripts/txn_late_batch_campaign.py CLUSTER CLIENT TXN_VERSION RUNS [FIRST_SEED]
    python scripts/txn_late_batch_campaign.py --table campaign-*.jsonl

CLUSTER: a local cluster (`logtrial cluster up --name CLUSTER`); CLIENT: librdkafka or
java; TXN_VERSION: 1, 2 or `-` (leave the cluster's, e.g. Kafka 3.x has none).
Appends one JSON line per run to campaign-CLUSTER-CLIENT-tvV.jsonl in the working
directory (the runs themselves go under ./store), prints a summary row at the end.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from clusters.cluster import Cluster
from clusters.nodes.local import LocalCluster
from clusters.kafka.log_dump import Record, first_segment_records
from workloads.kafka_common import KeySpace

COUNTED = ("lost-write", "G1a", "partial-txn-read", "duplicate", "inconsistent-offsets")
RUN_OPTIONS = ["--txn", "--safe", "--nemesis", "client-delay", "--db-targets", "leader",
               "--nemesis-interval", "6", "--op-timeout", "3", "--time-limit", "20",
               "--recovery-time", "3", "--leave-db-running"]


def command(inventory: Path, client: str, txn_version: str, seed: int) -> list[str]:
    cmd = [sys.executable, "-m", "harness.cli", "test", "--nodes-file", str(inventory),
           "--client", client, "--seed", str(seed), *RUN_OPTIONS]
    return cmd + (["--txn-version", txn_version] if txn_version != "-" else [])


def run_dir(output: str) -> Path | None:
    found = re.search(r"^complete: (.+)$", output, re.MULTILINE)
    return Path(found[1].strip()) if found else None


def fate(records: list[Record], at: int) -> str:
    """COMMIT or ABORT: the first marker of the record's producer after it."""
    record = next(r for r in records if r.offset == at)
    for later in records:
        if later.offset > at and later.marker and later.batch.producer_id == record.batch.producer_id:
            return later.marker
    return "no marker yet"


def describe(records: list[Record], at: int) -> str:
    r = next((r for r in records if r.offset == at), None)
    if r is None:
        return f"offset {at}: not in the first segment"
    return (f"offset {at}: value {r.value} producer {r.batch.producer_id} epoch "
            f"{r.batch.producer_epoch} seq {r.sequence}, {fate(records, at)}")


def forensics(cluster: Cluster, run: Path, results: dict) -> list[str]:
    """For each lost write: what the log holds at its offset, and where its value is."""
    run_id = json.loads((run / "test.json").read_text())["run_id"]
    keys = KeySpace(f"{run_id}-q")
    dumps: dict[int, list[Record]] = {}  # key -> its partition's records, dumped once
    lines = []
    for lost in results["anomalies"].get("lost-write", {}).get("examples", []):
        key, offset, value = lost["key"], lost["offsets"][0], str(lost["values"][0])
        if key not in dumps:
            dumps[key] = first_segment_records(cluster, cluster.inventory.node_names[0],
                                               keys.topic(key), keys.partition(key))
        records = dumps[key]
        where = [r.offset for r in records if r.value == value]
        lines.append(f"key {key}: {value} acknowledged at {offset}; the log holds "
                     f"{describe(records, offset)}; {value} itself is at "
                     f"{', '.join(describe(records, o) for o in where) or 'no offset (never written)'}")
    return lines


def one_run(cluster: Cluster, inventory: Path, client: str, txn_version: str, seed: int) -> dict:
    cmd = command(inventory, client, txn_version, seed)
    done = subprocess.run(cmd, capture_output=True, text=True)
    run = run_dir(done.stdout)
    row = {"seed": seed, "command": " ".join(cmd[2:]), "exit": done.returncode,
           "run": str(run) if run else None}
    if run is None or not (run / "results.json").exists():
        return {**row, "error": (done.stdout + done.stderr)[-800:]}
    results = json.loads((run / "results.json").read_text())
    counts = {name: results["anomalies"].get(name, {}).get("count", 0) for name in COUNTED}
    row.update(valid=results["valid"], counts=counts,
               txns=results["stats"]["by_f"].get("txn", {}))
    if counts["lost-write"]:
        row["forensics"] = forensics(cluster, run, results)
        (run / "forensics.txt").write_text("\n".join(row["forensics"]) + "\n")
    return row


def main(name: str, client: str, txn_version: str, runs: int, first_seed: int) -> int:
    inventory = LocalCluster(name).inventory_path
    out = Path(f"campaign-{name}-{client}-tv{txn_version}.jsonl")
    rows = []
    with Cluster.open(inventory) as cluster:
        for seed in range(first_seed, first_seed + runs):
            row = one_run(cluster, inventory, client, txn_version, seed)
            rows.append(row)
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps({k: row.get(k) for k in ("seed", "valid", "counts", "error")}),
                  flush=True)
    checked = [r for r in rows if "counts" in r]
    totals = {name: sum(r["counts"][name] for r in checked) for name in COUNTED}
    hit = sum(1 for r in checked if r["counts"]["lost-write"] or r["counts"]["G1a"])
    print(f"{client} tv{txn_version}: {len(checked)} runs checked ({len(rows) - len(checked)} "
          f"without a verdict), {hit} with a lost write or an aborted read; totals {totals}")
    return 0


def table(paths: list[str]) -> str:
    """docs/findings.md's cell table from campaign files: one row per file."""
    lines = ["| cell | runs | runs with a lost write or aborted read | "
             + " | ".join(f"`{name}`" for name in COUNTED)
             + " | lost writes whose offset holds a batch committed / aborted | committed txns |",
             "|---" * (len(COUNTED) + 5) + "|"]
    for path in paths:
        rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        checked = [r for r in rows if "counts" in r]
        hit = sum(1 for r in checked if r["counts"]["lost-write"] or r["counts"]["G1a"])
        totals = [sum(r["counts"][name] for r in checked) for name in COUNTED]
        committed = sum(r["txns"].get("ok", 0) for r in checked)
        fates = [line.split(", ")[1].split(";")[0] for r in checked
                 for line in r.get("forensics", []) if ", " in line]
        cell = Path(path).stem.removeprefix("campaign-")
        lines.append(f"| {cell} | {len(checked)} (of {len(rows)}) | {hit} | "
                     + " | ".join(map(str, totals))
                     + f" | {fates.count('COMMIT')} / {fates.count('ABORT')} | {committed} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1] == "--table":
        print(table(sys.argv[2:]))
        sys.exit(0)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]),
                  int(sys.argv[5]) if len(sys.argv) > 5 else 1))
