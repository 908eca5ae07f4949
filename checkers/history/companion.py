"""Where a history's Parquet companion lives and whether it is complete and
up to date: plain file checks, no Spark (deciding how to check a history
must not start a JVM). Writing and reading it: checkers/history/spark_load.py."""
from __future__ import annotations

import json
from pathlib import Path

SOURCE = "_SOURCE.json"
OP_COUNTS = "op_counts.json"
# 2: records of info sends and of failed/info polls, PROVEN flags; 3: op_counts.json;
# 4: ops/ keeps each completion's `starts`; 5: and its `rebalance_log`
FORMAT = 5


def fingerprint(history: Path) -> dict:
    st = history.stat()
    return {"history": history.name, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "format": FORMAT}


def companion_path(history: Path) -> Path:
    return history.with_suffix(".parquet")


def is_companion(path: Path) -> bool:
    return path.is_dir() and (path / SOURCE).is_file()


def companion_for(history: Path) -> Path | None:
    """The complete, up-to-date companion of `history`, if there is one."""
    companion = companion_path(history)
    if not is_companion(companion) or not history.is_file():
        return None
    try:
        recorded = json.loads((companion / SOURCE).read_text())
    except json.JSONDecodeError:
        return None
    return companion if recorded == fingerprint(history) else None
