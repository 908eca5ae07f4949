"""The SparkSession the checkers run on.

By default an embedded `local[*]` session tuned for a small machine (few
shuffle partitions, adaptive execution, a driver heap sized from RAM). Any
other master (`spark://host:7077`, `yarn`, `k8s://...`) runs the same code
unchanged: nothing here depends on the driver and executors sharing memory.
"""
from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession

from checkers.spark.archive import archive_file
from common.jvm_archive import use_options

APP_NAME = "logtrial-check"


def _cores() -> int:
    return os.cpu_count() or 2


def _driver_memory() -> str:
    """Half the machine's RAM, between 1 and 5 GiB: in local mode the driver
    JVM is also the only executor, so it holds every shuffle buffer. 5 GiB
    checks 10^7 queue operations (from JSON Lines too) and keeps the whole
    check, Python workers included, near 8 GB; a bigger heap only let the
    JVM grow (docs/benchmarks.md)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 4 << 30
    gib = max(1, min(5, total // (2 << 30)))
    return f"{gib}g"


LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")


def _quiet_jvm_option() -> str:
    return f"-Dlog4j2.configurationFile={LOG4J_CONFIG}"


# PySpark 4 records the Python call site of every Column function for error
# messages: five JVM round trips and a stack walk each, about a quarter of a
# small history's check. Errors still name the failing expression.
NO_CALL_SITES = {"spark.python.sql.dataFrameDebugging.enabled": "false"}


def _driver_java_options() -> str:
    """Quiet logging, and the driver's class archive (checkers/spark/archive.py)
    when there is one: a local driver JVM then starts on about 40 % less CPU."""
    return f"{_quiet_jvm_option()} {use_options(archive_file())}".rstrip()


def local_settings() -> dict[str, str]:
    cores = _cores()
    return {
        **NO_CALL_SITES,
        "spark.driver.extraJavaOptions": _driver_java_options(),
        # the few pandas steps (graph_shrink's SCC fallback) need this venv's
        # numpy/scipy in the Python workers, not whatever python3 is on PATH
        "spark.pyspark.python": os.environ.get("PYSPARK_PYTHON", sys.executable),
        "spark.driver.memory": os.environ.get("LOGTRIAL_SPARK_DRIVER_MEMORY", _driver_memory()),
        "spark.sql.shuffle.partitions": str(max(4, cores * 2)),
        "spark.default.parallelism": str(max(4, cores * 2)),
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.coalescePartitions.enabled": "true",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.session.timeZone": "UTC",
        # 10^7-op histories: keep Arrow/Python out of the hot path, avoid
        # broadcasting anything that grows with the history
        "spark.sql.autoBroadcastJoinThreshold": str(16 << 20),
    }


def remote_settings() -> dict[str, str]:
    return {
        **NO_CALL_SITES,
        "spark.driver.extraJavaOptions": _quiet_jvm_option(),
        "spark.sql.adaptive.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
    }


def quiet_logging(spark: SparkSession) -> None:
    """Spark prints INFO/WARN chatter on stderr; checkers only report results."""
    spark.sparkContext.setLogLevel("ERROR")
    logging.getLogger("py4j").setLevel(logging.ERROR)


@contextmanager
def _stderr_to(path: str | None):
    """The JVM inherits our stderr and prints start-up banners on it before
    any log configuration applies; point fd 2 at `path` while it starts."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def get_spark(master: str | None = None, extra: dict[str, str] | None = None,
              jvm_log: str | None = None) -> SparkSession:
    """Return a SparkSession on `master` (embedded local[*] when None).

    An active session is reused, so the CLI, the runner and the tests pay the
    JVM start-up once per process. With `jvm_log`, the JVM's own stderr goes
    to that file instead of the console.
    """
    active = SparkSession.getActiveSession()
    if active is not None and (master is None or active.sparkContext.master == master):
        return active
    if active is not None:
        active.stop()
    if master is None or master.startswith("local"):
        # PySpark starts Python workers with $PYSPARK_PYTHON (default: python3
        # on PATH, without this venv's numpy/scipy for graph_shrink's SCC step)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(APP_NAME)
    settings = local_settings() if master is None or master.startswith("local") else remote_settings()
    builder = builder.master(master or "local[*]")
    for key, value in {**settings, **(extra or {})}.items():
        builder = builder.config(key, value)
    with _stderr_to(jvm_log):
        spark = builder.getOrCreate()
    quiet_logging(spark)
    return spark


SMALL_INPUT_BYTES = 64 << 20
SMALL_INPUT_SETTINGS = {
    # On small inputs Spark's fixed costs dominate: compiling whole-stage code
    # for each of the checker's ~100 stages, and the extra jobs adaptive
    # execution splits each query into. Both pay off only on big inputs.
    # Expressions are interpreted, not compiled to Java per query: a warm
    # check of a small history took 22 % less wall time and 30 % less JVM CPU
    # (2.5-2.7 s against 3.2-3.5 s, same run).
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.files.minPartitionNum": "1",
}


def tune_for_input(spark: SparkSession, input_bytes: int) -> None:
    """Per-check runtime settings by input size (SQL confs, settable on a live session)."""
    large = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK",
             "spark.sql.adaptive.enabled": "true",
             "spark.sql.shuffle.partitions": str(max(4, _cores() * 2)),
             # files read in tasks of a quarter of a core's share each, not a whole share: the
             # companion's 309 MB of micro-op records at 10^7 made 4 tasks of uneven cost on 2
             # cores, and one idled while the other ended the last
             "spark.sql.files.minPartitionNum": str(_cores() * 4)}
    for key, value in (SMALL_INPUT_SETTINGS if input_bytes < SMALL_INPUT_BYTES else large).items():
        spark.conf.set(key, value)
