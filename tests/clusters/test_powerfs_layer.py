"""powerfs on real FUSE mounts on this machine: what a cut keeps is exactly what was made
durable. The daemon runs as the nodes run it (python3, mfusepy beside it), here in a
temporary directory; it is controlled over its unix socket."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from clusters.nodes.powerfs import DAEMON_SOURCE, FSTYPE, JOURNAL, POSIX, mfusepy_source, names_model
from clusters.nodes.powerfs_daemon import request

MOUNT_WAIT_S = 15.0


def own_mounts() -> list[str]:
    """This namespace's powerfs mount points."""
    text = Path("/proc/self/mountinfo").read_text()
    return [line.split(" - ")[0].split(" ")[4] for line in text.splitlines()
            if line.split(" - ")[1].split(" ")[0] == FSTYPE]


class Layer:
    """One powerfs mount over a backing directory, its daemon a child process."""

    def __init__(self, root: Path, names_model: str = POSIX) -> None:
        self.root = root
        self.backing, self.mnt, self.grave = root / "disk", root / "mnt", root / "grave"
        self.socket = root / "control.sock"
        for source in (DAEMON_SOURCE, mfusepy_source()):
            shutil.copy(source, root / source.name)
        self.backing.mkdir()
        self.mnt.mkdir()
        self.daemon = subprocess.Popen(
            ["python3", str(root / DAEMON_SOURCE.name), "mount", str(self.backing), str(self.mnt),
             str(self.socket), str(self.grave), names_model], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + MOUNT_WAIT_S
        while str(self.mnt) not in own_mounts() or not self.socket.exists():
            if self.daemon.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"powerfs did not mount: {self.daemon.stderr.read().decode()}")
            time.sleep(0.05)

    def cut(self, mode: str = "clean") -> dict:
        reply = request(str(self.socket), {"cmd": "cut", "mode": mode})
        assert "error" not in reply, reply
        return reply

    def unmount(self) -> None:
        if str(self.mnt) in own_mounts():
            subprocess.run(["fusermount3", "-u", "-z", str(self.mnt)], check=True)
        try:
            self.daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon.wait()


@pytest.fixture
def layer(tmp_path: Path) -> Iterator[Layer]:
    """A layer in the strict (POSIX) names model: only a directory fsync makes a name durable."""
    mounted = Layer(tmp_path)
    try:
        yield mounted
    finally:
        mounted.unmount()


def write(path: Path, data: bytes, offset: int | None = None, sync: bool = False) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, os.fstat(fd).st_size if offset is None else offset)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def test_a_cut_keeps_exactly_the_synced_bytes(layer: Layer) -> None:
    log = layer.mnt / "00000.log"
    write(log, b"synced-1 ", sync=True)
    sync_dir(layer.mnt)
    write(log, b"lost tail")
    write(log, b"SYN", offset=0)  # an overwrite inside the synced part, never synced
    assert log.read_bytes() == b"SYNced-1 lost tail"

    dropped = layer.cut()
    layer.unmount()

    assert (layer.backing / "00000.log").read_bytes() == b"synced-1 "
    assert dropped["files"] == 1 and dropped["bytes"] == len(b"lost tail") + 3
    assert dropped["file_list"][0]["size_before"] == 18 and dropped["file_list"][0]["size_after"] == 9


def test_a_second_sync_moves_the_durable_point(layer: Layer) -> None:
    log = layer.mnt / "index"
    write(log, b"a" * 10000, sync=True)
    sync_dir(layer.mnt)
    write(log, b"b" * 5000, offset=2000, sync=True)
    write(log, b"c" * 100, offset=9000)
    os.truncate(log, 3000)  # cut off synced blocks: a cut must bring them back
    layer.cut()
    layer.unmount()
    assert (layer.backing / "index").read_bytes() == b"a" * 2000 + b"b" * 5000 + b"a" * 3000


def test_o_dsync_writes_are_durable_as_they_land(layer: Layer) -> None:
    path = layer.mnt / "journal"
    write(path, b"", sync=True)
    sync_dir(layer.mnt)
    fd = os.open(path, os.O_WRONLY | os.O_DSYNC)
    os.write(fd, b"each write synced")
    os.close(fd)
    assert layer.cut()["bytes"] == 0
    layer.unmount()
    assert (layer.backing / "journal").read_bytes() == b"each write synced"


def test_a_rename_never_made_durable_is_undone(layer: Layer) -> None:
    write(layer.mnt / "state.tmp", b"new", sync=True)
    write(layer.mnt / "state", b"old", sync=True)
    sync_dir(layer.mnt)
    os.rename(layer.mnt / "state.tmp", layer.mnt / "state")  # no fsync of the directory
    assert (layer.mnt / "state").read_bytes() == b"new"

    dropped = layer.cut()
    layer.unmount()

    assert sorted(os.listdir(layer.backing)) == ["state", "state.tmp"]
    assert (layer.backing / "state").read_bytes() == b"old"
    assert (layer.backing / "state.tmp").read_bytes() == b"new"
    assert dropped["name_list"] == [{"op": "rename", "path": "/state.tmp", "new": "/state"}]


def test_a_rename_made_durable_stays(layer: Layer) -> None:
    write(layer.mnt / "state.tmp", b"new", sync=True)
    sync_dir(layer.mnt)
    os.rename(layer.mnt / "state.tmp", layer.mnt / "state")
    sync_dir(layer.mnt)
    assert layer.cut()["names"] == 0
    layer.unmount()
    assert os.listdir(layer.backing) == ["state"]
    assert (layer.backing / "state").read_bytes() == b"new"


def test_a_file_whose_directory_was_never_synced_disappears(layer: Layer) -> None:
    (layer.mnt / "topic-0").mkdir()
    sync_dir(layer.mnt)
    write(layer.mnt / "topic-0" / "synced-file", b"data", sync=True)  # its data, not its name
    (layer.mnt / "gone-dir").mkdir()
    layer.cut()
    layer.unmount()
    assert os.listdir(layer.backing) == ["topic-0"]
    assert os.listdir(layer.backing / "topic-0") == []


def test_a_deletion_never_made_durable_brings_the_file_back(layer: Layer) -> None:
    write(layer.mnt / "segment", b"kept", sync=True)
    sync_dir(layer.mnt)
    os.unlink(layer.mnt / "segment")
    assert not (layer.mnt / "segment").exists()
    layer.cut()
    layer.unmount()
    assert (layer.backing / "segment").read_bytes() == b"kept"
    assert os.listdir(layer.grave) == []


def test_torn_mode_keeps_a_prefix_of_the_last_write(layer: Layer) -> None:
    log = layer.mnt / "log"
    write(log, b"durable|", sync=True)
    sync_dir(layer.mnt)
    write(log, b"first-lost|")
    write(log, b"0123456789")
    dropped = layer.cut("torn")
    layer.unmount()
    # the earlier unsynced write is gone; the last one landed half: a hole, then its prefix
    assert (layer.backing / "log").read_bytes() == b"durable|" + b"\0" * 11 + b"01234"
    assert dropped["kept"] == 5


def test_after_a_cut_the_layer_answers_eio(layer: Layer) -> None:
    write(layer.mnt / "f", b"x", sync=True)
    layer.cut()
    with pytest.raises(OSError) as raised:
        (layer.mnt / "f").read_bytes()
    assert raised.value.errno == 5  # EIO


def test_a_killed_daemon_leaves_a_dead_mount_that_a_lazy_unmount_removes(layer: Layer) -> None:
    write(layer.mnt / "f", b"x")
    layer.daemon.send_signal(signal.SIGKILL)
    layer.daemon.wait()
    assert str(layer.mnt) in own_mounts()
    with pytest.raises(OSError):
        os.listdir(layer.mnt)  # ENOTCONN: the mount answers nothing
    layer.unmount()
    assert str(layer.mnt) not in own_mounts()
    assert (layer.backing / "f").read_bytes() == b"x"  # never cut: the backing has it all


def test_in_the_journal_model_any_fsync_makes_earlier_name_changes_durable(tmp_path: Path) -> None:
    layer = Layer(tmp_path, JOURNAL)
    try:
        (layer.mnt / "partition-0").mkdir()
        write(layer.mnt / "partition-0" / "segment", b"synced", sync=True)  # commits the mkdir too
        (layer.mnt / "partition-1").mkdir()  # after the last fsync: undone
        write(layer.mnt / "partition-0" / "segment", b" lost")
        dropped = layer.cut()
    finally:
        layer.unmount()
    assert os.listdir(layer.backing) == ["partition-0"]
    assert (layer.backing / "partition-0" / "segment").read_bytes() == b"synced"
    assert dropped["name_list"] == [{"op": "mkdir", "path": "/partition-1"}]


def test_the_setting_names_the_model_or_says_what_is_wrong() -> None:
    assert names_model("true") == JOURNAL and names_model("posix") == POSIX and names_model("false") is None
    with pytest.raises(ValueError, match="logtrial.powerfs='sometimes': expected true, journal, posix or false"):
        names_model("sometimes")
