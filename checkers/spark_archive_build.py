"""Builds the class-data-sharing archive of the local Spark driver, once per Java
and PySpark installation: a child process checks a tiny queue history and a
tiny list-append history on Spark with a JVM that dumps the classes it loaded
when it exits. Every later driver JVM starts with it: about 40 % less CPU to
start a session and run its first jobs (docs/benchmarks.md).

Usage: python -m checkers.spark_archive_build   (make install)
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from checkers.api import check_history
from checkers.history.writer import HistoryWriter
from checkers.options import CheckOptions
from checkers.spark.archive import archive_file
from common import jvm_archive
BUILD_TIMEOUT_S = 900
EXIT_TIMEOUT_S = 300


def _write(path: Path, events: list[dict]) -> Path:
    """A history file of `events`, written by the harness's own writer."""
    with HistoryWriter(path) as writer:
        for event in events:
            writer.append(event)
    return path


def _queue_events() -> list[dict]:
    return [{"type": "invoke", "process": 0, "f": "send", "value": [["send", 1, 10]]},
            {"type": "ok", "process": 0, "f": "send", "value": [["send", 1, [0, 10]]]},
            {"type": "invoke", "process": 1, "f": "txn", "value": [["send", 2, 20], ["poll"]]},
            {"type": "ok", "process": 1, "f": "txn", "value": [["send", 2, [0, 20]], ["poll", {"1": [[0, 10]]}]]},
            {"type": "invoke", "process": 2, "f": "assign", "value": [1, 2]},
            {"type": "ok", "process": 2, "f": "assign", "value": [1, 2]},
            {"type": "invoke", "process": 2, "f": "poll", "value": [["poll"]]},
            {"type": "ok", "process": 2, "f": "poll", "value": [["poll", {"1": [[0, 10]], "2": [[0, 20]]}]]}]


def _list_append_events() -> list[dict]:
    return [{"type": "invoke", "process": 0, "f": "txn", "value": [["append", 1, 1], ["r", 2, None]]},
            {"type": "ok", "process": 0, "f": "txn", "value": [["append", 1, 1], ["r", 2, []]]},
            {"type": "invoke", "process": 1, "f": "txn", "value": [["append", 2, 1], ["r", 1, None]]},
            {"type": "ok", "process": 1, "f": "txn", "value": [["append", 2, 1], ["r", 1, [1]]]}]


def dump(partial: Path) -> int:
    """In the child: checks both tiny histories on Spark with a JVM that dumps
    its classes to `partial` at exit; prints the JVM's pid."""
    from checkers.spark.session import _quiet_jvm_option, get_spark   # loads pyspark: only in the child
    spark = get_spark(extra={"spark.driver.extraJavaOptions":
                             f"{_quiet_jvm_option()} {jvm_archive.dump_option(partial)}"})
    with tempfile.TemporaryDirectory(prefix="logtrial-archive-") as work:
        folder = Path(work)
        check_history(_write(folder / "queue.jsonl", _queue_events()), "queue", out_dir=folder / "q",
                      engine="spark", options=CheckOptions(realtime_cycles=True))
        check_history(_write(folder / "la.jsonl", _list_append_events()), "list-append", out_dir=folder / "la",
                      engine="spark")
    print(spark.sparkContext._gateway.proc.pid, flush=True)
    spark.stop()
    return 0


def ensure_archive(say=print) -> Path | None:
    """The archive, built first if missing; None if it cannot be (Spark then
    starts without one)."""
    return jvm_archive.ensure(archive_file(), _build, "spark", say)


def _build(partial: Path) -> str | None:
    """Runs the dump in a child process and waits for its JVM to finish writing."""
    try:
        child = subprocess.run([sys.executable, "-m", "checkers.spark_archive_build", "--dump", str(partial)],
                               capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"the checks took over {BUILD_TIMEOUT_S} s"
    lines = child.stdout.split()
    if child.returncode != 0 or not lines or not lines[-1].isdigit():
        return f"the checks failed: {child.stderr.strip()[-300:]}"
    if not jvm_archive.wait_gone(int(lines[-1]), EXIT_TIMEOUT_S):
        return f"the JVM did not exit within {EXIT_TIMEOUT_S} s"
    return None


def main(argv: list[str]) -> int:
    if argv[:1] == ["--dump"] and len(argv) == 2:
        return dump(Path(argv[1]))
    found = ensure_archive()
    if found:
        print(f"spark: class archive {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
