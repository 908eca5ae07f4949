"""The run lifecycle: setup, main phase (+ nemesis), heal, recovery, final
reads, teardown, check, report.

`run_test(TestOptions) -> RunResult` is the one entry point (`logtrial test`
and `logtrial test-all` both call it). Whatever happens (Ctrl-C, a crash of
the harness), faults are healed in a `finally`, the history written so far is
kept and test.json says `incomplete`.
"""
from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import random
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusters import exit_codes
from clusters.local import DEFAULT_NAME
from clusters.pinning import ClientPins, local_cluster_of
from checkers.history.writer import HistoryWriter
from harness.progress import Progress
from results import store
from workloads.base import Client, Completion, Op, Workload
from workloads.producer_knobs import check_max_in_flight, invoke_extra, with_idle
from workloads.settings import WorkloadSettings

log = logging.getLogger(__name__)

WORKLOADS = ("queue", "list-append")
# the cluster --local brings up (and reuses when left running)
LOCAL_CLUSTER = DEFAULT_NAME


@dataclass
class TestOptions:
    __test__ = False  # not a pytest test class
    workload: str = "queue"
    # where the cluster is: an inventory, a local cluster to bring up, or bare bootstrap servers
    nodes_file: str | None = None
    local: int | None = None
    bootstrap_servers: str | None = None   # an external Kafka without SSH: no faults, no node logs
    insecure_host_keys: bool = False
    store: str = "store"
    test_name: str | None = None
    time_limit: float = 60.0
    rate: float = 100.0
    concurrency: int = 10
    nemesis: tuple[str, ...] = ()
    nemesis_interval: float = 10.0
    nemesis_options: dict = field(default_factory=dict)  # the nemesis helper's extra options
    seed: int | None = None
    recovery_time: float = 10.0
    final_time_limit: float = 60.0
    leave_db_running: bool = False
    check: bool = True
    report: bool = True
    progress: bool = False
    # workload settings (WorkloadSettings)
    acks: str = "all"
    idempotence: bool = True
    retries: int | None = None
    isolation_level: str = "read_committed"
    auto_offset_reset: str = "earliest"
    enable_auto_commit: bool = False
    sub_via: str = "assign"
    txn: bool = False
    abort_p: float = 0.0
    crash_clients: bool = False
    key_count: int = 4
    max_writes_per_key: int = 1024
    replication_factor: int = 3
    min_insync_replicas: int = 2
    op_timeout: float = 10.0
    poll_timeout: float = 0.1
    # producer knobs and settings presets (harness/presets.py, docs/producer-state.md)
    max_in_flight: int | None = None
    idle_p: float = 0.0
    idle_ms: int = 0
    preset: str | None = None
    db_settings: dict = field(default_factory=dict)  # broker settings (--preset, --set)
    # which Kafka (clusters/kafka_versions.py); None: the inventory's, else the default
    kafka_version: str | None = None
    kafka_mode: str | None = None
    dynamic_quorum: bool = False  # a KIP-853 controller quorum (--dynamic-quorum)
    # each process's clients reach one node only, round-robin (docs/pinned-clients.md)
    pin_clients: bool = False

    def workload_settings(self, brokers: int) -> WorkloadSettings:
        names = {f.name for f in dataclasses.fields(WorkloadSettings)}
        values = {k: v for k, v in dataclasses.asdict(self).items() if k in names}
        values["replication_factor"] = min(self.replication_factor, brokers)
        values["min_insync_replicas"] = min(self.min_insync_replicas, values["replication_factor"])
        return WorkloadSettings(**values)

    def validate(self) -> None:
        """Raises ValueError naming the first bad option (before anything is created)."""
        if self.workload not in WORKLOADS:
            raise ValueError(f"--workload must be one of {', '.join(WORKLOADS)}, not {self.workload!r}")
        sources = [n for n in ("nodes_file", "local", "bootstrap_servers") if getattr(self, n)]
        if len(sources) != 1:
            raise ValueError("give exactly one of --nodes-file, --local N or --bootstrap-servers")
        if self.nemesis_kinds and self.bootstrap_servers:
            raise ValueError("faults need a cluster reached over SSH (--nodes-file or --local), "
                             "not --bootstrap-servers")
        for name in ("time_limit", "rate", "op_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"--{name.replace('_', '-')} must be positive")
        if self.concurrency < 1:
            raise ValueError("--concurrency must be at least 1")
        if self.idempotence and self.acks != "all":  # librdkafka refuses the combination
            raise ValueError(f"--idempotence needs --acks all (got --acks {self.acks}); add --no-idempotence")
        if self.idempotence and self.retries == 0:
            raise ValueError("--idempotence needs --retries > 0; add --no-idempotence")
        if self.txn and not self.idempotence:
            raise ValueError("--txn needs idempotence (transactions imply it); drop --no-idempotence")
        check_max_in_flight(self.max_in_flight, self.idempotence or self.txn)
        if self.pin_clients and self.bootstrap_servers:
            raise ValueError("--pin-clients needs a local cluster (--local or --nodes-file of one), "
                             "not --bootstrap-servers")
        if self.pin_clients and self.nodes_file:
            local_cluster_of(self.nodes_file)  # PinningError: real machines have no client namespaces
        if self.bootstrap_servers and (self.kafka_version or self.kafka_mode):
            raise ValueError("--kafka-version/--kafka-mode choose what logtrial installs; an "
                             "existing Kafka at --bootstrap-servers runs what it runs")
        if self.bootstrap_servers and self.dynamic_quorum:
            raise ValueError("--dynamic-quorum chooses how logtrial formats its cluster; an "
                             "existing Kafka at --bootstrap-servers runs what it runs")
        if self.kafka_version or self.kafka_mode or self.dynamic_quorum:
            from clusters.kafka_config import check_dynamic_quorum
            from clusters.kafka_versions import resolve
            release = resolve(self.kafka_version, self.kafka_mode)  # KafkaVersionError names the version
            if self.dynamic_quorum:
                check_dynamic_quorum(release)

    @property
    def release_settings(self) -> dict[str, str]:
        from clusters.kafka_config import release_settings
        return release_settings(self.kafka_version, self.kafka_mode, self.dynamic_quorum)

    @property
    def nemesis_kinds(self) -> list[str]:
        kinds = [k for k in self.nemesis if k and k != "none"]
        if not kinds and self.nemesis_options.get("nemesis_schedule"):
            kinds = ["replay"]  # the schedule file says which faults
        return kinds


@dataclass
class RunResult:
    run_dir: Path
    status: str               # "complete" | "incomplete"
    valid: Any                # True | False | "unknown" | None (not checked)
    exit_code: int
    counts: dict
    error: str | None = None


def test_name(options: TestOptions) -> str:
    """Readable: workload, faults and the settings that matter."""
    parts = [options.workload, ",".join(options.nemesis_kinds) or "no-faults", f"acks={options.acks}"]
    if options.txn:
        parts.append("txn")
    if not options.idempotence:
        parts.append("no-idem")
    if options.isolation_level != "read_committed":
        parts.append("read-uncommitted")
    if options.sub_via != "assign":
        parts.append(options.sub_via)
    if options.enable_auto_commit:
        parts.append("auto-commit")
    if options.crash_clients:
        parts.append("crash")
    if options.pin_clients:
        parts.append("pinned")
    if options.dynamic_quorum:
        parts.append("dynamic-quorum")
    if options.kafka_version or options.kafka_mode:
        parts.append("-".join(["kafka", options.kafka_version or "default", options.kafka_mode or ""]).rstrip("-"))
    return store.safe_name("-".join(parts))


def run_test(options: TestOptions) -> RunResult:
    return Run(options).execute()


class Run:
    def __init__(self, options: TestOptions):
        options.validate()
        self.options = options
        self.seed = options.seed if options.seed is not None else random.randrange(2**31)
        self.name = options.test_name or test_name(options)
        self.run_dir = store.create_run_dir(options.store, self.name)
        # names this run's topics, transactional ids and groups on the cluster
        self.run_id = "lt" + self.run_dir.name.replace("T", "")[2:14] + os.urandom(2).hex()
        self.history = HistoryWriter(self.run_dir / store.HISTORY)
        self.phase = "setup"
        self.stop = threading.Event()
        self.cluster = None
        self.local_cluster = None
        self.nemesis = None
        self.faults: ActiveFaults | None = None
        self._healed = False
        self.workload: Workload | None = None
        self.workers: list[threading.Thread] = []
        self.pins: ClientPins | None = None
        self._processes = itertools.count()
        self._process_lock = threading.Lock()
        self.test_json: dict = {}
        self._log_handler = _attach_log(self.run_dir / store.LOG)

    # -- lifecycle ------------------------------------------------------------------------
    def execute(self) -> RunResult:
        progress = Progress(self.status_line).start() if self.options.progress else None
        status, error, exit_code = "incomplete", None, exit_codes.HARNESS_ERROR
        self._write_test_json(status="running")
        try:
            self._say(f"run directory: {self.run_dir}")
            self._setup()
            self._main_phase()
            self._enter("heal")
            self._heal()
            self._enter("recover")
            self._sleep(self.options.recovery_time)
            self._final_phase()
            status = "complete"
        except KeyboardInterrupt:
            error, exit_code = "interrupted", exit_codes.INTERRUPTED
            log.warning("interrupted during %s", self.phase)
        except BaseException as e:  # the harness itself failed: keep what we have
            error = _first_line(f"{type(e).__name__}: {e}")  # the whole story is in logtrial.log
            if self.phase == "setup" and isinstance(e, ValueError):  # e.g. a bad inventory
                exit_code = exit_codes.BAD_INPUT
            log.error("harness error during %s:\n%s", self.phase, traceback.format_exc())
        finally:
            self._finish(status)
            if progress is not None:
                progress.stop()
        valid = None
        if status == "complete":
            try:
                valid, exit_code = self._check_and_report()
            except KeyboardInterrupt:  # the run itself is complete; only the verdict is missing
                error, exit_code = "interrupted while checking", exit_codes.INTERRUPTED
        elif exit_code != exit_codes.INTERRUPTED:
            self._report()
        self._write_test_json(status=status, error=error, valid=valid)
        self._say(f"{status}: {self.run_dir}" + (f" ({error})" if error else ""))
        _detach_log(self._log_handler)
        return RunResult(self.run_dir, status, valid, exit_code, dict(self.history.counts), error)

    def _setup(self) -> None:
        from workloads.kafka_common import broker_count
        bootstrap = self._open_cluster()
        brokers = broker_count(bootstrap)
        log.info("kafka at %s: %d brokers", bootstrap, brokers)
        settings = self.options.workload_settings(brokers)
        self.test_json["workload_settings"] = dataclasses.asdict(settings)
        self.test_json["bootstrap_servers"] = bootstrap
        self.workload = _make_workload(self.options.workload, bootstrap, settings, self.run_id, self.seed)
        self.workload.setup()
        if self.options.pin_clients:
            self.pins = ClientPins(self.local_cluster or local_cluster_of(self.options.nodes_file))
            self.test_json["pinned_clients"] = self.pins.addresses()
            log.info("clients pinned to nodes: %s", self.test_json["pinned_clients"])
        log.info("topics for the first keys created: %s", self.workload.topic_names())

    def _open_cluster(self) -> str:
        opts = self.options
        if opts.bootstrap_servers:
            return opts.bootstrap_servers
        from clusters.cluster import Cluster
        inventory_path = opts.nodes_file
        if opts.local:
            inventory_path = self._local_cluster(opts.local)
        if not opts.local:
            self._record_cluster({"inventory": str(Path(inventory_path).resolve())})
        self.cluster = Cluster.open(inventory_path, insecure_host_keys=opts.insecure_host_keys,
                                    db_settings={**opts.db_settings, **opts.release_settings})
        release = self.cluster.db.release
        log.info("cluster %s open; %s running on every node", self.cluster.inventory.name, release.label)
        self.test_json["kafka"] = {"version": release.version, "mode": release.mode}
        self.test_json["versions"]["kafka"] = release.version
        from clusters.reconfigure import restart_if_reconfigured
        for line in restart_if_reconfigured(self.cluster):
            self._say(line)
        self.test_json["nodes"] = [n.name for n in self.cluster.inventory.nodes]
        return self.cluster.db.bootstrap_servers()

    def _record_cluster(self, where: dict) -> None:
        """Written before the cluster is touched, so `logtrial cluster heal --run`
        finds it even if this process dies in the next instant."""
        self._write_test_json(cluster=where)

    def _local_cluster(self, nodes: int) -> str:
        """Brings up the local cluster LOCAL_CLUSTER, or reuses it if one of the
        right size was left running (--leave-db-running)."""
        from clusters.inventory import load_inventory, write_inventory
        from clusters.local import LocalCluster
        local = LocalCluster(LOCAL_CLUSTER)
        self._record_cluster({"local": local.name, "state_root": str(local.root)})
        wanted = self.options.release_settings
        if local.exists():
            left = load_inventory(local.inventory_path)
            if len(left.nodes) != nodes or _release_of(left.settings) != _release_of(wanted):
                local.down()
        if not local.exists():
            self._say(f"bringing up local cluster {LOCAL_CLUSTER} ({nodes} nodes)")
            inventory = local.up(nodes)
            # the release travels with the inventory: a reused cluster says what it runs
            write_inventory(dataclasses.replace(inventory, settings=wanted), local.inventory_path)
        self.local_cluster = local
        return str(local.inventory_path)

    def _main_phase(self) -> None:
        self._enter("main")
        generator = with_idle(self.workload.generator(), getattr(self.workload, "settings", None), self.seed)
        nemesis_thread = self._start_nemesis()
        interval = self.options.concurrency / self.options.rate
        for slot in range(self.options.concurrency):
            worker = threading.Thread(target=self._worker, args=(slot, generator, interval),
                                      name=f"worker-{slot}", daemon=True)
            worker.start()
            self.workers.append(worker)
        self._sleep(self.options.time_limit)
        self.stop.set()
        self._join_workers()
        if nemesis_thread is not None:
            nemesis_thread.join(timeout=self.options.nemesis_interval + 30)

    def _worker(self, slot: int, generator, interval: float) -> None:
        rng = random.Random(self.seed + slot)
        process = self.new_process()
        client = self._new_client(process)
        next_due = time.monotonic() + rng.uniform(0, interval)
        try:
            while not self.stop.is_set():
                now = time.monotonic()
                if next_due > now and self.stop.wait(next_due - now):
                    break
                # never build up more than a second of backlog after a slow op
                next_due = max(next_due, now - 1.0) + interval * (0.5 + rng.random())
                op = generator.next_op(process)
                if op is None:
                    break
                completion = self.record(process, client, op)
                if completion.type == "info" or completion.retire:
                    _close_in_background(client)
                    process = self.new_process()
                    client = self._new_client(process)
        except RuntimeError as e:  # the history closed under a worker stuck past the deadline
            log.warning("worker %s stopped: %s", slot, e)
        finally:
            _close_in_background(client)

    def _new_client(self, process: int) -> Client:
        """A process's client; pinned, the calling thread first moves to its node's namespace."""
        if self.pins is not None:
            self.pins.enter(process)
        return self.workload.new_client(process)

    def record(self, process: int, client: Client, op: Op) -> Completion:
        """Runs one op on a client, recording its invocation and completion."""
        pinned = self.pins.node_field(process) if self.pins is not None else {}
        self.history.invoke(process, op.f, op.value, **invoke_extra(op.f, getattr(self.workload, "settings", None)),
                            **pinned)
        try:
            completion = client.invoke(op)
        except Exception as e:  # a bug or an unexpected client error: we cannot know what happened
            log.warning("process %s: %s raised:\n%s", process, op.f, traceback.format_exc())
            completion = Completion("info", op.value, ["CLIENT_CRASH", f"{type(e).__name__}: {e}"])
        self.history.complete(completion.type, process, op.f, completion.value, completion.error,
                              **completion.extra, **pinned)
        return completion

    def new_process(self) -> int:
        with self._process_lock:
            return next(self._processes)

    def _join_workers(self) -> None:
        deadline = time.monotonic() + self.options.op_timeout * 2 + 5
        for worker in self.workers:
            worker.join(timeout=max(0.0, deadline - time.monotonic()))
        stuck = [w.name for w in self.workers if w.is_alive()]
        if stuck:
            log.warning("workers still inside an op after the deadline (their ops stay open): %s", stuck)

    def _start_nemesis(self) -> threading.Thread | None:
        kinds = self.options.nemesis_kinds
        if not kinds:
            return None
        if self.cluster is None:
            raise ValueError("faults need a cluster reached over SSH (--nodes-file or --local)")
        from nemesis.runner import NemesisRunner
        self.faults = ActiveFaults(self.history)
        self.nemesis = NemesisRunner(self.cluster, self.faults, kinds, self.options.nemesis_interval, self.seed,
                                     topics=self.workload.topic_names(), **_nemesis_kwargs(self.options))
        thread = threading.Thread(target=self.nemesis.run, args=(self.stop,), name="nemesis", daemon=True)
        thread.start()
        return thread

    def _heal(self) -> None:
        """Ends every fault and checks the cluster is whole again (heal_all verifies)."""
        if self.nemesis is not None and not self._healed:
            self.nemesis.heal_all()
            self._healed = True

    def _final_phase(self) -> None:
        self._enter("final")
        deadline = time.monotonic() + self.options.final_time_limit
        first_index = self.history.event_count
        final = self.workload.final_reads(self.new_process(), self.record, deadline, self.new_process)
        final["first_index"] = first_index  # the final reads are the history's events from here on
        self.test_json["final"] = final
        log.info("final reads: %s", final)

    def _finish(self, status: str) -> None:
        """Always runs: stop the workload, heal, keep the history, collect logs, tear down."""
        self._enter("teardown")
        self.stop.set()
        for step in (self._heal_quietly, self.history.close, self._close_workload, self._unpin,
                     self._collect_logs, self._teardown_cluster):
            try:
                step()
            except BaseException:
                log.error("teardown step %s failed:\n%s", step.__name__, traceback.format_exc())
        self._write_test_json(status=status)

    def _heal_quietly(self) -> None:
        """In the finally: a nemesis that ran is healed again unless that already succeeded."""
        self._heal()

    def _close_workload(self) -> None:
        if self.workload is not None:
            self.workload.close()

    def _unpin(self) -> None:
        if self.pins is not None:
            self.pins.remove()

    def _collect_logs(self) -> None:
        """Every node's Kafka logs into nodes/<node>/, in parallel, best effort."""
        if self.cluster is None:
            return
        for node, error in self.cluster.collect_logs(self.run_dir / store.NODES).items():
            log.warning("collecting logs from %s failed: %s", node, error)

    def _teardown_cluster(self) -> None:
        if self.cluster is not None:
            if not self.options.leave_db_running and self.options.nodes_file:
                for node in self.cluster.inventory.nodes:
                    self.cluster.db.stop(node.name)
            self.cluster.close()
        if self.local_cluster is not None and not self.options.leave_db_running:
            self.local_cluster.down()

    # -- check and report -------------------------------------------------------------------
    def _check_and_report(self) -> tuple[Any, int]:
        self._enter("check")
        results = self._check()
        valid = results.get("valid", "unknown")
        self._report()
        code = {True: exit_codes.VALID, False: exit_codes.INVALID}.get(valid, exit_codes.UNKNOWN)
        self._say(f"valid: {valid}")
        return valid, code

    def _check(self) -> dict:
        if not self.options.check:
            return _not_checked(self.run_dir, "checking disabled (--no-check)")
        try:
            from checkers.api import check_history
        except ImportError as e:
            return _not_checked(self.run_dir, f"no checker available ({e})")
        try:
            return check_history(self.run_dir / store.HISTORY, workload=self.options.workload, out_dir=self.run_dir)
        except Exception as e:
            log.error("checker failed:\n%s", traceback.format_exc())
            return _not_checked(self.run_dir, f"checker failed: {type(e).__name__}: {e}")

    def _report(self) -> None:
        if not self.options.report:
            return
        try:
            from results.report import write_report
        except ImportError:
            log.info("no report writer available")
            return
        try:
            path = write_report(self.run_dir)
            self._say(f"report: {path or self.run_dir / 'report.html'}")
        except Exception:
            log.error("report failed:\n%s", traceback.format_exc())

    # -- bookkeeping ------------------------------------------------------------------------
    def _enter(self, phase: str) -> None:
        self.phase = phase
        # on the history's clock, so the report can mark the phases on its plots
        self.test_json.setdefault("phases", []).append(
            {"phase": phase, "time_s": round(self.history.elapsed_s(), 3)})
        log.info("phase: %s", phase)
        self.history.flush() if phase != "teardown" else None
        self._write_test_json()

    def _sleep(self, seconds: float) -> None:
        """Sleeps in short steps so Ctrl-C lands promptly."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(0.2, left))

    def status_line(self) -> str:
        counts = self.history.counts
        faults = ""
        if self.faults is not None:
            faults = f" | faults: {', '.join(sorted(self.faults.active)) or 'none'}"
        return (f"[{self.phase}] {self.history.elapsed_s():6.1f}s | ok {counts['ok']} fail {counts['fail']} "
                f"info {counts['info']}{faults}")

    def _say(self, message: str) -> None:
        log.info(message)
        if self.options.progress:
            print(message, flush=True)

    def _write_test_json(self, **updates: Any) -> None:
        t = self.test_json
        if not t:
            t.update(_initial_test_json(self))
        t.update({k: v for k, v in updates.items() if v is not None or k == "valid"})
        t["phase"] = self.phase
        t["counts"] = dict(self.history.counts)
        if t.get("status") in ("complete", "incomplete"):
            t.setdefault("end_time", _now_iso())
        store.write_test_json(self.run_dir, t)


def _release_of(settings: dict) -> tuple[str, str, str]:
    from clusters.kafka_config import MODE_KEY, QUORUM_KEY, VERSION_KEY
    from clusters.kafka_versions import resolve
    release = resolve(settings.get(VERSION_KEY), settings.get(MODE_KEY))
    return release.version, release.mode, settings.get(QUORUM_KEY, "static")


def _initial_test_json(run: Run) -> dict:
    return {
        "name": run.name,
        "workload": run.options.workload,
        "nemesis": run.options.nemesis_kinds,
        "seed": run.seed,
        "run_id": run.run_id,
        "options": dataclasses.asdict(run.options),
        "versions": versions(),
        "status": "running",
        "start_time": _now_iso(),
        "history_start_monotonic_ns": run.history.start_ns,
    }


def versions() -> dict:
    import confluent_kafka
    try:
        from importlib.metadata import version
        logtrial = version("logtrial")
    except Exception:
        logtrial = "unknown"
    # "kafka" is the cluster's version, known once it is open (unknown behind --bootstrap-servers)
    return {"logtrial": logtrial, "kafka": "unknown", "confluent_kafka": confluent_kafka.version()[0],
            "librdkafka": confluent_kafka.libversion()[0]}


class ActiveFaults:
    """The history as the nemesis sees it: passes events through and keeps the
    set of faults in force, for the progress line."""

    def __init__(self, history: HistoryWriter):
        self.history = history
        self.active: set[str] = set()

    def nemesis(self, f: str, value: Any, **extra: Any) -> int:
        from nemesis.registry import F_NAMES  # what each recorded f starts or stops
        fault, action = F_NAMES.get(f, (None, None))
        if f == "heal":
            self.active.clear()
        elif action == "stop":
            self.active.discard(fault)
        elif action == "start":
            self.active.add(fault)
        return self.history.nemesis(f, value, **extra)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.history, name)


# `logtrial test` option name -> NemesisRunner keyword
_NEMESIS_KWARGS = {"db_targets": "targets", "partition_clients": "partition_clients",
                   "nemesis_schedule": "schedule_file"}


def _nemesis_kwargs(options: TestOptions) -> dict:
    extra = options.nemesis_options
    return {_NEMESIS_KWARGS.get(k, k): v for k, v in extra.items() if v is not None}


def _make_workload(name: str, bootstrap: str, settings: WorkloadSettings, run_id: str, seed: int) -> Workload:
    if name == "queue":
        from workloads.queue import QueueWorkload
        return QueueWorkload(bootstrap, settings, run_id, seed)
    from workloads.list_append import ListAppendWorkload
    return ListAppendWorkload(bootstrap, settings, run_id, seed)


def _not_checked(run_dir: Path, reason: str) -> dict:
    import json
    results = {"valid": "unknown", "anomaly_types": [], "bad_anomaly_types": [], "anomalies": {},
               "stats": {}, "not_checked": reason}
    (run_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    log.info("not checked: %s", reason)
    return results


def _close_in_background(client: Client) -> None:
    """Closing can block (leaving a group during a partition): keep it off the workers."""
    def close() -> None:
        try:
            client.close()
        except Exception as e:
            log.info("closing a client failed: %s", e)
    threading.Thread(target=close, name="client-close", daemon=True).start()


def _attach_log(path: Path) -> logging.Handler:
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    return handler


def _detach_log(handler: logging.Handler) -> None:
    logging.getLogger().removeHandler(handler)
    handler.close()


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= limit else line[:limit] + "…"


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
