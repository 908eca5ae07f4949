"""check_history(): the one entry point the CLI and the runner call."""
from __future__ import annotations

import errno
import json
import logging
import os
import time
from pathlib import Path

from checkers.history.companion import SOURCE, companion_for, companion_path, is_companion
from checkers.history.edn_fast import is_edn, read_edn_history
from checkers.history.errors import HistoryError, Problem
from checkers.history.fault_events import declared_starts
from checkers.history.read import read_history
from checkers.options import CheckOptionError, CheckOptions
from checkers.progress import stage
from checkers.registry import checker_for
from checkers.verdict import faults

ENGINES = ("auto", "local", "spark")
# Up to this size a history bound for Spark is validated in-process first, so
# bad input is reported before the JVM starts; above it, in Spark's parsing pass.
VALIDATE_FIRST_MAX_BYTES = 64 << 20
RESULTS_FILE = "results.json"
log = logging.getLogger(__name__)
JVM_LOG = "spark.log"


def _run_local(history_path: Path, out: Path, workload: str, options: CheckOptions) -> tuple[dict, dict]:
    checker = checker_for(workload)
    companion = _companion_to_check(history_path, workload, out)
    if companion is not None:
        with stage("checking in worker processes"):
            results = checker.check_companion(companion, options)
        return results, {"engine": "local", "parquet_companion": True}
    with stage("reading history"):
        parsed = read_edn_history(history_path, workload) if is_edn(history_path) else \
            read_history(history_path, workload)
    with stage("checking"):
        results = checker_for(workload).check_local(parsed, options)
    return results, {"engine": "local", "parquet_companion": False}


def _companion_to_check(history_path: Path, workload: str, out: Path) -> Path | None:
    """The Parquet companion the local engine checks, for a workload that
    has a companion checker: the history itself when it is one; for a JSON
    Lines history above local_max_bytes, its companion (written first, and
    validating it, if need be: companion_first). None: read the history
    in-process (a small one, EDN, or one whose companion could not be written)."""
    checker = checker_for(workload)
    if checker.check_companion is None:
        return None
    if is_companion(history_path):
        return history_path
    if not _json_lines_file(history_path) or is_edn(history_path) \
            or history_path.stat().st_size <= checker.local_max_bytes:
        return None
    source = companion_first(history_path, workload, out)
    return source if is_companion(source) else companion_for(history_path)


def _json_lines_file(path: Path) -> bool:
    """A JSON Lines history on this machine (not Parquet, not a remote URI)."""
    return path.is_file() and path.suffix != ".parquet"


def validate_first(history_path: Path, workload: str) -> bool:
    """Validates a JSON Lines history of up to VALIDATE_FIRST_MAX_BYTES in-process
    (HistoryError names file and line), so bad input is reported before the JVM
    starts; True if it did (Spark need not validate it again)."""
    small = _json_lines_file(history_path) and history_path.stat().st_size <= VALIDATE_FIRST_MAX_BYTES
    if small:
        with stage("validating history"):
            read_history(history_path, workload)
    return small


def companion_first(history_path: Path, workload: str, out: Path) -> Path:
    """What Spark should read for `history_path`. A JSON Lines history larger
    than VALIDATE_FIRST_MAX_BYTES gets its Parquet companion first, written
    in-process (checkers/history/companion_write.py) in one pass that also validates
    it, before the JVM starts: Spark then reads Parquet instead of parsing
    JSON. The companion goes beside the history (later checks reuse it), or
    into `out` where the history's folder cannot be written. Anything else,
    or a history with an up-to-date companion, is read as it is."""
    if not _json_lines_file(history_path) or history_path.stat().st_size <= VALIDATE_FIRST_MAX_BYTES:
        return history_path
    if companion_for(history_path) is not None:
        return history_path
    from checkers.history.companion_parts import CompanionWriteError  # loads pandas: only when needed
    from checkers.history.companion_write import write_companion  # loads pandas: only when needed
    try:
        try:
            return write_companion(history_path, workload)
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            return write_companion(history_path, workload, out / companion_path(history_path).name)
    except (CompanionWriteError, OSError):     # bad input (HistoryError) still stops the check
        log.warning("no Parquet companion for %s: Spark parses the JSON instead", history_path, exc_info=True)
        return history_path


def _run_spark(history_path: Path, out: Path, spark_master, workload: str,
               options: CheckOptions) -> tuple[dict, dict]:
    from checkers.history.spark_load import load  # loads pyspark: only when needed
    from checkers.spark.session import get_spark, tune_for_input  # loads pyspark: only when needed
    if is_edn(history_path):
        history_path = _imported(history_path, workload, out)
    validated = validate_first(history_path, workload)
    source = companion_first(history_path, workload, out)
    with stage("starting Spark"):
        spark = get_spark(spark_master, jvm_log=str(out / JVM_LOG))
    with stage("checking on Spark"), load(spark, source, workload, validated=validated) as loaded:
        tune_for_input(spark, loaded.source_bytes)
        results = checker_for(workload).check_spark(spark, loaded, options)
    return results, {"engine": "spark", "parquet_companion": loaded.from_companion,
                     "spark_master": spark.sparkContext.master}


def _imported(edn: Path, workload: str, out: Path) -> Path:
    """An EDN history to be checked on Spark, as JSON Lines in `out` (what
    `logtrial import-edn` writes), its problems reported as bad input."""
    from checkers.history.edn_convert import import_edn
    from checkers.history.edn_read import EdnImportError
    target = out / (edn.name.removesuffix(".gz").removesuffix(".edn") + ".jsonl")
    try:
        import_edn(edn, target, workload)
    except EdnImportError as e:
        raise HistoryError([Problem(str(edn), e.line, e.what)]) from None
    return target


def choose_engine(history_path: Path, engine: str, spark_master, workload: str = "queue") -> str:
    """auto, with no Spark master named: in-process for a JSON Lines history
    up to the workload's local_max_bytes, and above that for a workload
    with a companion checker while its memory fits (companion_fits; the
    queue at 10^7 operations: 55.3 s against 90.0 s on Spark, docs/benchmarks.md),
    a companion folder too; Spark otherwise. A Parquet companion beside a
    small history changes nothing: reading the JSON in process beats
    reading the Parquet (10^5 queue operations: 2 s against 12 s on Spark)."""
    if engine not in ENGINES:
        raise CheckOptionError(f"unknown engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if engine != "auto":
        return engine
    checker = checker_for(workload)
    if spark_master is not None:
        return "spark"
    if is_companion(history_path):
        recorded = json.loads((history_path / SOURCE).read_text())
        return "local" if checker.companion_fits(recorded["bytes"]) else "spark"
    if not history_path.is_file() or history_path.suffix == ".parquet":
        return "spark"
    if is_edn(history_path):
        return "local"      # its reader is in-process (checkers/history/edn_fast.py)
    size = history_path.stat().st_size
    return "local" if size <= checker.local_max_bytes or checker.companion_fits(size) else "spark"


def write_results(results: dict, out_dir: Path) -> Path:
    """Write results.json atomically (a reader never sees half a file)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RESULTS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)
    return path


def judge_faults(history_path: Path, results: dict) -> dict | None:
    """results.json's `faults` (checkers/verdict/faults.py) from the start events
    that declare their fault; None for a history without any (an old one, or one
    no fault struck), whose results stay as they were. Both engines' results get
    it here, from the same fields, so they cannot disagree on it."""
    with stage("reading faults"):
        struck = faults.strikes(declared_starts(history_path))
    if not struck:
        return None
    return faults.judge(results["valid"], results["bad_anomaly_types"], struck,
                        results.get("stats", {}).get("end_time"))


def check_history(history_path, workload: str = "queue", out_dir=None, spark_master=None,
                  engine: str = "auto", options: CheckOptions = CheckOptions()) -> dict:
    """Check the history at `history_path` (history.jsonl, its Parquet
    companion, or events in Parquet) with
    the `workload`'s checker on Spark (`spark_master`, embedded local mode
    when None), write results.json into `out_dir` (default: beside the
    history) and return the results; `options` says what to check for
    (checkers/options.py). Raises HistoryError on bad input, CheckOptionError
    on a bad option."""
    checker = checker_for(workload)
    checker.validate(options)
    history_path = Path(history_path)
    out = Path(out_dir) if out_dir is not None else history_path.parent
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if choose_engine(history_path, engine, spark_master, workload) == "local":
        results, how = _run_local(history_path, out, workload, options)
    else:
        results, how = _run_spark(history_path, out, spark_master, workload, options)
    judged = judge_faults(history_path, results)
    if judged is not None:
        results["faults"] = judged
    results["workload"] = workload
    results["checker"] = {"history": str(history_path), **how,
                          "seconds": round(time.monotonic() - started, 3),
                          "allow": sorted(options.allow), "forbid": sorted(options.forbid)}
    if checker.uses_model:
        results["checker"]["consistency_model"] = options.model
    write_results(results, out)
    return results
