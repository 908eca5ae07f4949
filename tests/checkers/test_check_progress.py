"""`logtrial check` and `to-parquet` on a terminal: the bytes read, the pass under way
and the time taken, rewritten in place; in a pipe, the summary alone."""
from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from common import exit_codes
ROOT = Path(__file__).resolve().parents[2]
PROGRESS = re.compile(r"history\.jsonl: (?:([\d.]+) of )?[\d.]+ MB(?: read)? \| ([a-zA-Z ]+) \| \d+ s")


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    """A queue history of 2 x 10^5 lines: its reading alone outlasts the first progress line."""
    path = tmp_path_factory.mktemp("progress") / "history.jsonl"
    subprocess.run([sys.executable, "-m", "benchmarks.gen_history", str(path), "--events", "200000"],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    return path


def on_a_terminal(*args: str) -> tuple[int, str]:
    """Runs `logtrial ARGS` with stdout and stderr on a pseudo-terminal; (exit, output)."""
    leader, follower = pty.openpty()
    # the history is small: the wait short, and lines often enough that one falls inside its
    # reading however fast that is (at 0.5 s apart, a quiet machine read it between two)
    env = {**os.environ, "LOGTRIAL_PROGRESS_AFTER": "0.2", "LOGTRIAL_PROGRESS_EVERY": "0.02"}
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, env=env,
                            stdout=follower, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(timeout=300), b"".join(chunks).decode(errors="replace")


def test_check_on_a_terminal_shows_bytes_read_pass_and_time(history):
    code, output = on_a_terminal("check", str(history), "--engine", "local")
    assert code in (exit_codes.VALID, exit_codes.INVALID), output
    seen = PROGRESS.findall(output)
    assert any(float(read or 0) > 0 for read, stage in seen if stage == "reading history"), output
    assert "checking" in {stage for _, stage in seen}, output
    assert "\r\x1b[K" in output  # one line, rewritten in place
    assert "valid:" in output


def test_to_parquet_on_a_terminal_shows_its_pass(history, tmp_path):
    copy = tmp_path / "history.jsonl"
    copy.symlink_to(history)
    code, output = on_a_terminal("to-parquet", str(copy))
    assert code == exit_codes.VALID, output
    seen = PROGRESS.findall(output)
    assert any(float(read or 0) > 0 for read, stage in seen if stage == "writing the Parquet companion"), output


def test_check_in_a_pipe_prints_the_summary_alone(history, tmp_path):
    done = subprocess.run([sys.executable, "-m", "harness.cli", "check", str(history), "--engine", "local",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "LOGTRIAL_PROGRESS_AFTER": "0"})
    assert done.returncode in (exit_codes.VALID, exit_codes.INVALID), done.stderr
    assert not PROGRESS.search(done.stdout + done.stderr)
    assert done.stdout.startswith("valid:")
