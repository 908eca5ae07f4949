"""A test-all matrix's journal, STORE/matrix.json: the options and cells the matrix was
started with, the cell under way, and each finished cell's run. It is rewritten whole
(temp file + rename) before and after every cell, so a control node killed at any
instant leaves a journal `logtrial test-all --resume STORE` can go on from."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.test_record import now_iso
from results.runs import read_test_json
from results.store import TEST_JSON, mark_incomplete

JOURNAL = "matrix.json"
FORMAT = 1
ABANDONED = "the control node died during this run; test-all --resume ran its cell again"


class JournalError(ValueError):
    """A journal that cannot be resumed from; names the file and what is wrong."""


@dataclass
class Finished:
    run_dir: str | None   # relative to the store; None when the harness failed before one existed
    exit_code: int
    error: str | None = None


@dataclass
class Journal:
    path: Path
    options: dict[str, Any]           # test-all's options, as the command line gave them
    cells: list[dict[str, Any]]       # the matrix, in order
    finished: dict[int, Finished] = field(default_factory=dict)  # cell index -> its run
    running: int | None = None        # the cell under way (re-run on resume)
    running_since: str | None = None  # when it began, as test.json's start_time says times

    @classmethod
    def start(cls, store: Path, options: dict[str, Any], cells: list[dict[str, Any]]) -> "Journal":
        journal = cls(Path(store) / JOURNAL, options, cells)
        journal.save()
        return journal

    @classmethod
    def load(cls, store: Path) -> "Journal":
        path = Path(store) / JOURNAL
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise JournalError(f"{path}: no matrix journal here (was {store} a test-all store?)") from None
        except (OSError, json.JSONDecodeError) as e:
            raise JournalError(f"{path}: unreadable: {e}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise JournalError(f"{path}: not a matrix journal of format {FORMAT}")
        try:
            finished = {int(i): Finished(**run) for i, run in data["finished"].items()}
            return cls(path, dict(data["options"]), list(data["cells"]), finished, data.get("running"),
                       data.get("running_since"))
        except (KeyError, TypeError, ValueError) as e:
            raise JournalError(f"{path}: malformed ({type(e).__name__}: {e})") from None

    def begin(self, index: int) -> None:
        self.running, self.running_since = index, now_iso()
        self.save()

    def finish(self, index: int, run: Finished) -> None:
        self.finished[index] = run
        self.running = self.running_since = None
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT, "options": self.options, "cells": self.cells, "running": self.running,
                "running_since": self.running_since,
                "finished": {str(i): vars(run) for i, run in sorted(self.finished.items())}}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1, default=str) + "\n")
        os.replace(tmp, self.path)


def mark_abandoned(journal: Journal, store: Path) -> list[Path]:
    """The run directories of the cell that was under way when the matrix stopped (status
    still `running`, begun since the cell began): marked incomplete, so the index does not
    show them under way for ever. Returns them."""
    if journal.running_since is None:
        return []
    marked = []
    for test_json in Path(store).glob(f"*/*/{TEST_JSON}"):
        test, _ = read_test_json(test_json.parent)
        if test.get("status") == "running" and str(test.get("start_time", "")) >= journal.running_since:
            mark_incomplete(test_json.parent, ABANDONED, test)
            marked.append(test_json.parent)
    return marked


def unfinished(store: Path) -> bool:
    """Whether `store` holds a matrix that stopped before its last cell finished."""
    try:
        journal = Journal.load(store)
    except JournalError:
        return False
    return len(journal.finished) < len(journal.cells)


if __name__ == "__main__":  # scripts/nightly.sh: `python -m harness.matrix_journal STORE`
    import sys
    if len(sys.argv) != 2:
        sys.exit("usage: python -m harness.matrix_journal STORE  (exit 0: an unfinished matrix is there)")
    sys.exit(0 if unfinished(Path(sys.argv[1])) else 1)
