"""Where the class-data-sharing archive of the local Spark driver lives
(common/jvm_archive.py). checkers/spark/session.py starts every local driver
JVM with it; checkers/spark_archive_build.py builds it."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

from common import jvm_archive
from clusters.kafka.versions import cache_root


@functools.lru_cache(maxsize=None)
def archive_file() -> Path:
    """Where the archive for this Java and PySpark is (whether it exists or not):
    inside the virtualenv, whose PySpark jars it is tied to (so it goes with it),
    else in the cache."""
    import pyspark  # loads pyspark: only when needed
    jars = Path(pyspark.__file__).parent / "jars"
    folder = Path(sys.prefix) / "share" / "logtrial" if sys.prefix != sys.base_prefix else cache_root() / "spark"
    return folder / f"spark-classes-{jvm_archive.java_key(str(jars), pyspark.__version__)}.jsa"
