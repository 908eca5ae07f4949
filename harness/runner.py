"""The run lifecycle: setup, main phase (+ nemesis), heal, recovery, final
reads, teardown, check, report.

`run_test(TestOptions) -> RunResult` is the one entry point (`logtrial test`
and `logtrial test-all` both call it). Whatever happens (Ctrl-C, a crash of
the harness), faults are healed in a `finally`, the history written so far is
kept and test.json says `incomplete`.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkers.api import check_history
from checkers.history.writer import HistoryWriter
from common import exit_codes
from harness import interrupts
from harness.client_open import open_bound, open_clients
from clusters.cluster import HEAL_BOUND
from clusters.nodes.lock import RunLock
from clusters.nodes.pinning import ClientPins
from harness.progress import Progress
from harness.run_cluster import ClusterSession
from harness.system_support import check_supported, fault_targets, struck_kinds
from harness.test_options import TestOptions, test_name
from harness.test_record import TestRecord, start_record
from harness.watchdog import Watchdog
from harness.workers import Workers
from results import store
from workloads.base import Client, Workload
from workloads.producer_knobs import with_idle

log = logging.getLogger(__name__)

# how long a run waits for its cluster: a dead run's watchdog heals within HEAL_BOUND
RUN_LOCK_WAIT_S = HEAL_BOUND + 60

@dataclass
class RunResult:
    run_dir: Path
    status: str               # "complete" | "incomplete"
    valid: Any                # True | False | "unknown" | None (not checked)
    exit_code: int
    counts: dict
    error: str | None = None


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
        self.record = TestRecord(self.run_dir, self.history,
                                 start_record(self.name, options, self.seed, self.run_id, self.history))
        from nemesis.registry import db_settings  # loads confluent_kafka: only when needed
        self.session = ClusterSession(options.cluster, self.record, self._say,
                                      db_settings(struck_kinds(options)))  # a replayed schedule's own
        self.stop = threading.Event()
        self.nemesis = None
        self.faults: ActiveFaults | None = None
        self._healed = False
        self.workload: Workload | None = None
        self.pins: ClientPins | None = None
        self.workers: Workers | None = None
        self._log_handler = _attach_log(self.run_dir / store.LOG)
        self.watchdog = Watchdog(self.run_dir, options.timing.hang_timeout)
        self.run_lock: RunLock | None = None

    @property
    def phase(self) -> str:
        return self.record.phase

    # -- lifecycle ------------------------------------------------------------------------
    def execute(self) -> RunResult:
        progress = Progress(self.status_line).start() if self.options.progress else None
        status, error, exit_code = "incomplete", None, exit_codes.HARNESS_ERROR
        self.record.write(status="running")
        self.watchdog.start()  # without the cluster's lock until the cluster is open (_watch)
        try:
            self._say(f"run directory: {self.run_dir}")
            self._setup()
            self._main_phase()
            self._enter("heal")
            self._heal()
            self._enter("recover")
            self._sleep(self.options.timing.recovery_time)
            self._final_phase()
            interrupts.raise_if_requested()  # a Ctrl-C that something on the way swallowed
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
            self._unwatch()
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
        self.record.write(status=status, error=error, valid=valid)
        self._say(f"{status}: {self.run_dir}" + (f" ({error})" if error else ""))
        _detach_log(self._log_handler)
        return RunResult(self.run_dir, status, valid, exit_code, dict(self.history.counts), error)

    def _setup(self) -> None:
        from workloads.kafka_common import broker_count  # loads confluent_kafka: only when needed
        bootstrap = self.session.open()
        self._watch()
        if self.session.cluster is not None:
            check_supported(self.session.cluster.db, self.options)
        brokers = broker_count(bootstrap)
        log.info("kafka at %s: %d brokers", bootstrap, brokers)
        settings = self.options.workload.settings_for(brokers, self.record.data.get("kafka", {}).get("version"))
        self.record["workload_settings"] = dataclasses.asdict(settings)
        self.record["bootstrap_servers"] = bootstrap
        self.workload = self.options.workload.kind.make(bootstrap, settings, self.run_id, self.seed)
        self.workload.setup()
        self.record["versions"].update(self.workload.clients.versions())
        self.pins = self.session.client_pins()
        if self.pins is not None:
            self.record["pinned_clients"] = self.pins.addresses()
            log.info("clients pinned to nodes: %s", self.record["pinned_clients"])
        log.info("topics for the first keys created: %s", self.workload.topic_names())

    def _watch(self) -> None:
        """From here until the cluster is let go, the cluster is this run's alone: its
        watchdog (harness/watchdog.py), which heals it after a hang or death of this
        process, holds its lock too, so no other run starts on it before that heal."""
        if self.session.cluster is not None:
            self.run_lock = RunLock(self.session.cluster.inventory.path).acquire(
                f"the run in {self.run_dir} (pid {os.getpid()}, or its watchdog)", RUN_LOCK_WAIT_S, self._say)
            self.watchdog.hand_lock(self.run_lock.fd)

    def _unwatch(self) -> None:
        self.watchdog.stop()
        if self.run_lock is not None:
            self.run_lock.release()

    def _main_phase(self) -> None:
        timing = self.options.timing
        self.workers = Workers(self.history, self.workload, self.pins, self.seed, self.stop)
        opened = self._open_clients()
        self._enter("main")  # the clock starts: every client is open, the nemesis not yet started
        generator = with_idle(self.workload.generator(), getattr(self.workload, "settings", None), self.seed)
        nemesis_thread = self._start_nemesis()
        self.workers.start(generator, timing.rate, opened)
        self._sleep(timing.time_limit)
        self.stop.set()
        self.workers.join(self.options.workload.settings.op_timeout)
        if nemesis_thread is not None:
            nemesis_thread.join(timeout=self.options.nemesis.interval + 30)

    def _open_clients(self) -> list[tuple[int, Client]]:
        """Every slot's first client made and warmed before the clock (harness/client_open.py)."""
        self._enter("open")
        settings = self.options.workload.settings
        kind = settings.client
        processes = [self.workers.new_process() for _ in range(self.options.timing.concurrency)]
        # a pinned client reaches its own node only: the first keys' leaders and the group's
        # coordinator may be beyond it, so it is made but not warmed (its ops find out)
        keys = self.workload.first_keys() if self.pins is None else None
        opened = open_clients(processes, self.workers.new_client, keys, kind, open_bound(settings.op_timeout))
        self.record["client_open"] = opened.record(kind)
        log.info("clients open: %d %s clients in %.1f s (slowest %.1f s)", len(opened.clients), kind,
                 opened.seconds, max(opened.per_process_s.values(), default=0.0))
        return opened.clients

    def _start_nemesis(self) -> threading.Thread | None:
        kinds = self.options.nemesis.active_kinds
        if not kinds:
            return None
        if self.session.cluster is None:
            raise ValueError("faults need a cluster reached over SSH (--nodes-file or --local)")
        from nemesis.runner import NemesisRunner  # loads confluent_kafka: only when needed
        self.faults = ActiveFaults(self.history)
        kwargs = self.options.nemesis.runner_kwargs()
        # a system without roles (tansu) draws from the other targets only
        targets = fault_targets(self.session.cluster.db, kwargs.get("targets"))
        if targets is not None:
            kwargs["targets"] = targets
        self.nemesis = NemesisRunner(self.session.cluster, self.faults, kinds, self.options.nemesis.interval,
                                     self.seed, topics=self.workload.topic_names(),
                                     op_timeout_s=self.options.workload.settings.op_timeout, **kwargs)
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
        deadline = time.monotonic() + self.options.timing.final_time_limit
        first_index = self.history.event_count
        workers = self.workers
        final = self.workload.final_reads(workers.new_process(), workers.record, deadline, workers.new_process)
        final["first_index"] = first_index  # the final reads are the history's events from here on
        self.record["final"] = final
        log.info("final reads: %s", final)

    def _finish(self, status: str) -> None:
        """Always runs: stop the workload, heal, keep the history, collect logs, tear down."""
        self._enter("teardown")
        self.stop.set()
        for step in (self._heal_quietly, self.history.close, self._close_workload, self._unpin,
                     self._collect_logs, self.session.close):
            try:
                step()
            except BaseException:
                log.error("teardown step %s failed:\n%s", step.__name__, traceback.format_exc())
        self.record.write(status=status)

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
        self.session.collect_logs(self.run_dir / store.NODES)

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
        check = self.options.check
        if not check.enabled:
            return _not_checked(self.run_dir, "checking disabled (--no-check)")
        try:
            return check_history(self.run_dir / store.HISTORY, workload=self.options.workload.name,
                                 out_dir=self.run_dir, spark_master=check.spark_master, engine=check.engine,
                                 options=check.options)
        except Exception as e:
            log.error("checker failed:\n%s", traceback.format_exc())
            return _not_checked(self.run_dir, f"checker failed: {type(e).__name__}: {e}")

    def _report(self) -> None:
        if not self.options.report:
            return
        try:
            from results.report import write_report  # loads matplotlib: only when needed
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
        if phase not in ("teardown", "check"):  # those two run after an interrupt too
            interrupts.raise_if_requested()
        log.info("phase: %s", phase)
        self.record.enter(phase)

    def _sleep(self, seconds: float) -> None:
        """Sleeps in short steps so Ctrl-C lands promptly."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            interrupts.raise_if_requested()
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


def _not_checked(run_dir: Path, reason: str) -> dict:
    results = {"valid": "unknown", "anomaly_types": [], "bad_anomaly_types": [], "anomalies": {},
               "stats": {}, "not_checked": reason}
    (run_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    log.info("not checked: %s", reason)
    return results


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
