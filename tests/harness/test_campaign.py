"""A campaign is `test-all` with a seeds axis and forensics: each combination runs once
per seed, each lost write is read back from the partition's log, and the anomaly
counts are summed per combination (harness/forensics.py, results/campaign.py)."""
from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusters.kafka.log_dump import Batch, Record
from common import exit_codes
from harness.commands.campaign import campaign
from harness.commands.test_all import journal_cell, matrix, parse_seeds
from harness.matrix_journal import Finished, Journal
from harness.forensics import LostWriteTrace, read_forensics, trace, trace_run
from results.campaign import COUNTED, markdown, totals_by_cell
from results.matrix_report import MatrixRun
from results.runs import read_run

ROOT = Path(__file__).resolve().parents[2]


# -- the seeds axis ------------------------------------------------------------------------------
def test_seeds_are_ranges_and_lists():
    assert parse_seeds("1-3,7") == [1, 2, 3, 7]
    assert parse_seeds("") == []
    with pytest.raises(ValueError, match="'x' is not a seed"):
        parse_seeds("1-3,x")
    with pytest.raises(ValueError, match="runs backwards"):
        parse_seeds("5-2")


def test_each_combination_runs_once_per_seed_on_each_transaction_version():
    cells = matrix(["queue"], ["client-delay"], "on", 1, clients=["librdkafka", "java"], txn_versions=[1, 2],
                   seeds=[11, 12, 13])
    assert len(cells) == 2 * 2 * 3
    assert [(c.txn_version, c.client, c.seed, c.attempt) for c in cells[:4]] == [
        (1, "librdkafka", 11, 1), (1, "librdkafka", 12, 2), (1, "librdkafka", 13, 3), (1, "java", 11, 1)]
    assert {c.txn for c in cells} == {True}


# -- forensics over a dumped log -----------------------------------------------------------------
def record(offset: int, value: str | None, pid: int, marker: str | None = None, seq: int = 0) -> Record:
    return Record(offset, Batch(offset, pid, 0, True, marker is not None), seq, value, marker)


def test_a_lost_write_whose_offset_holds_an_aborted_send_committed_later_is_traced_as_such():
    log = [record(0, "1", 7), record(1, None, 7, "ABORT"), record(2, "2", 7, seq=1), record(3, None, 7, "COMMIT")]
    # "3" was acknowledged at offset 2, which holds "2"; "3" is nowhere
    lost = trace(log, key=4, offset=2, value="3")
    assert lost.at_offset.value == "2" and lost.at_offset.fate == "COMMIT" and lost.value_found_at == []
    assert "3 itself is at no offset (never written)" in lost.words()
    # "1" is in the log, under its abort marker
    assert trace(log, 4, 0, "1").value_found_at[0].fate == "ABORT"
    assert trace(log, 4, 9, "1").at_offset is None


# -- the campaign table --------------------------------------------------------------------------
def write_run(store: Path, rel: str, counts: dict[str, int], committed: int, fates: list[str],
              faults_verdict: str | None = None, producer_errors: dict[str, int] | None = None) -> None:
    run = store / rel
    run.mkdir(parents=True)
    anomalies = {name: {"count": n, "examples": []} for name, n in counts.items() if n}
    stats = {"by_f": {"txn": {"ok": committed}}, "producer_errors": producer_errors or {},
             "out_of_order_sequence": {"total": (producer_errors or {}).get("OUT_OF_ORDER_SEQUENCE_NUMBER", 0)}}
    results = {"valid": not anomalies, "anomalies": anomalies, "stats": stats}
    if faults_verdict:
        results["faults"] = {"verdict": faults_verdict}
    (run / "results.json").write_text(json.dumps(results))
    (run / "test.json").write_text(json.dumps({"status": "complete", "workload": "queue"}))
    traces = [{"at_offset": {"fate": fate}} for fate in fates]
    (run / "forensics.json").write_text(json.dumps(traces))


def test_a_campaign_sums_each_cells_runs_and_their_forensics(tmp_path):
    store = tmp_path / "store"
    write_run(store, "a/1", {"lost-write": 2, "G1a": 3}, 10, ["COMMIT", "ABORT"])
    write_run(store, "a/2", {}, 12, [])
    write_run(store, "b/1", {"duplicate": 1}, 5, [])
    runs = [MatrixRun("queue", "client-delay", True, n, read_run(store / rel, store), 0, None, client=client,
                      seed=seed) for n, (rel, client, seed) in enumerate(
        [("a/1", "librdkafka", 1), ("a/2", "librdkafka", 2), ("b/1", "java", 1)], 1)]
    librdkafka, java = totals_by_cell(runs, store)
    assert librdkafka.cell == "client=librdkafka queue nemesis=client-delay txn=on"
    assert (librdkafka.runs, librdkafka.checked, librdkafka.hit, librdkafka.seeds_hit) == (2, 2, 1, [1])
    assert librdkafka.counts == {**dict.fromkeys(COUNTED, 0), "lost-write": 2, "G1a": 3}
    assert (librdkafka.lost_at_committed, librdkafka.lost_at_aborted, librdkafka.committed_txns) == (1, 1, 22)
    assert (java.hit, java.counts["duplicate"]) == (0, 1)
    assert (librdkafka.verdicts, java.verdicts) == ({"invalid": 1, "valid": 1}, {"invalid": 1})


def test_a_campaign_counts_each_verdict_and_the_producers_errors(tmp_path):
    """A producer-state cell: runs whose skips the deletion faults explain, one that
    duplicated, one the checker could not decide; the producers' errors summed."""
    store = tmp_path / "store"
    write_run(store, "a/1", {"assign-skip": 4}, 0, [], "expected-under-faults", {"OP_TIMEOUT": 2})
    write_run(store, "a/2", {"idempotent-duplicate": 1}, 0, [], "invalid",
              {"OUT_OF_ORDER_SEQUENCE_NUMBER": 1, "OP_TIMEOUT": 3})
    write_run(store, "a/3", {}, 0, [])
    (store / "a/3/results.json").write_text(json.dumps({"valid": "unknown", "anomalies": {}}))
    runs = [MatrixRun("queue", "producer-state+kill", False, n, read_run(store / f"a/{n}", store), 0, None,
                      client="java", seed=n) for n in (1, 2, 3)]
    (cell,) = totals_by_cell(runs, store)
    assert cell.verdicts == {"expected-under-faults": 1, "invalid": 1, "unknown": 1}
    assert (cell.checked, cell.counts["idempotent-duplicate"], cell.out_of_order_sequence) == (2, 1, 1)
    assert cell.producer_errors == {"OP_TIMEOUT": 5, "OUT_OF_ORDER_SEQUENCE_NUMBER": 1}
    row = markdown([cell]).splitlines()[-1]
    assert row.endswith("| expected-under-faults 1, invalid 1, unknown 1 | 1 | OP_TIMEOUT 5, OUT_OF_ORDER_SEQUENCE_NUMBER 1 |")


def journal_store(store: Path, client: str, seeds: list[int], finished: int) -> None:
    """A test-all store of a producer-state campaign whose first `finished` cells ran."""
    cells = matrix(["queue"], ["producer-state+kill"], "off", 1, clients=[client], seeds=seeds)
    journal = Journal.start(store, {"seeds": ",".join(map(str, seeds))}, [journal_cell(c) for c in cells])
    for index, cell in enumerate(cells[:finished]):
        rel = f"cell/{cell.seed}"
        write_run(store, rel, {"assign-skip": 1} if cell.seed % 2 else {}, 0, [], "expected-under-faults"
                  if cell.seed % 2 else None, {"UNKNOWN_PRODUCER_ID": 1})
        journal.finish(index, Finished(rel, 1 if cell.seed % 2 else 0))


def test_the_campaign_command_sums_a_cell_over_stores_and_refuses_a_store_without_a_journal(tmp_path):
    journal_store(tmp_path / "first", "java", [1, 2, 3], finished=3)
    journal_store(tmp_path / "second", "java", [4, 5, 6], finished=2)   # stopped in its third cell
    result = CliRunner().invoke(campaign, [str(tmp_path / "first"), str(tmp_path / "second")])
    assert result.exit_code == 0, result.output
    header, _, row = result.output.splitlines()
    assert row.startswith("| client=java queue nemesis=producer-state+kill txn=off | 5 (of 5) | 0 |")
    assert row.endswith("| expected-under-faults 3, valid 2 | 0 | UNKNOWN_PRODUCER_ID 5 |")
    missing = CliRunner().invoke(campaign, [str(tmp_path / "first"), str(tmp_path / "none")])
    assert missing.exit_code == exit_codes.BAD_INPUT
    assert f"{tmp_path / 'none' / 'matrix.json'}: no matrix journal here" in missing.output


# -- on the shared cluster -----------------------------------------------------------------------
@pytest.mark.cluster
def test_forensics_read_a_committed_send_back_from_its_partitions_log(healed_cluster, tmp_path):
    """A transactional send, committed, then said lost by results.json: the trace finds
    it at its offset under a COMMIT marker, from DumpLogSegments on a node."""
    from confluent_kafka import Producer

    from clusters.kafka.admin import create_topic
    from workloads.kafka_common import KeySpace
    run_id, key, value = "ltforensics" + uuid.uuid4().hex[:6], 3, "9001"
    keys = KeySpace(f"{run_id}-q")
    create_topic(healed_cluster, keys.topic(key), partitions=2)
    producer = Producer({"bootstrap.servers": healed_cluster.db.bootstrap_servers(),
                         "transactional.id": run_id, "acks": "all"})
    producer.init_transactions(30)
    producer.begin_transaction()
    acknowledged = []
    producer.produce(keys.topic(key), value=value.encode(), partition=keys.partition(key),
                     on_delivery=lambda err, msg: acknowledged.append(msg.offset()))
    producer.commit_transaction(30)
    run = tmp_path / "run"
    run.mkdir()
    (run / "test.json").write_text(json.dumps({"run_id": run_id}))
    (run / "results.json").write_text(json.dumps({"anomalies": {"lost-write": {"count": 1, "examples": [
        {"key": key, "offsets": [acknowledged[0]], "values": [int(value)]}]}}}))
    [lost] = trace_run(healed_cluster, run)
    assert isinstance(lost, LostWriteTrace)
    assert (lost.at_offset.value, lost.at_offset.fate) == (value, "COMMIT")
    assert [r.offset for r in lost.value_found_at] == acknowledged


@pytest.mark.cluster
@pytest.mark.slow
def test_a_campaign_runs_each_seed_and_sums_its_cell(healed_cluster, tmp_path):
    store = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "test-all", "--nodes-file", str(healed_cluster.inventory.path),
         "--leave-db-running", "--store", str(store), "--workloads", "queue", "--txn", "on",
         "--nemeses", "client-delay", "--preset", "late-batch", "--seeds", "3-4", "--time-limit", "6",
         "--rate", "20", "--concurrency", "2", "--engine", "local", "--forensics", "--db-targets", "leader,one"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode in (0, 1), output
    seeds = sorted(json.loads(p.read_text())["seed"] for p in store.glob("*/*/test.json"))
    assert seeds == [3, 4], output
    options = [json.loads(p.read_text())["options"] for p in store.glob("*/*/test.json")]
    # --db-targets given wins over the preset's ("leader"); its op timeout stays the preset's
    assert {(tuple(o["db_targets"]), o["op_timeout"]) for o in options} == {(("leader", "one"), 3.0)}
    table = (store / "campaign.md").read_text()
    assert "| queue nemesis=client-delay txn=on | 2 (of 2) |" in table, table
    for run in (p.parent for p in store.glob("*/*/test.json")):
        lost = json.loads((run / "results.json").read_text())["anomalies"].get("lost-write", {}).get("count", 0)
        assert bool(read_forensics(run)) == bool(lost)


def test_an_unknown_target_is_bad_input_named_before_any_run(tmp_path):
    done = subprocess.run([sys.executable, "-m", "harness.cli", "test-all", "--local", "3", "--store",
                           str(tmp_path), "--db-targets", "one,most"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == exit_codes.BAD_INPUT
    assert "unknown target 'most' (valid: one, minority, majority, all, controller, leader)" in done.stderr
    assert not any(tmp_path.iterdir())
