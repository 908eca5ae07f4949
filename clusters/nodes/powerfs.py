"""powerfs on a node, from the control node: putting a directory on the layer, cutting
its power, taking it off again, and finding what a dead run left.

The layer itself (clusters/nodes/powerfs_daemon.py) runs on the node as a daemon under
a pid file, uploaded with mfusepy beside it and started over SSH like the broker, so
it works on real machines too. A directory D goes on the layer thus: D's content
moves to D.powerfs-disk (the backing directory, on the same file system, so the move
is a rename), D stays as the empty mount point, and the daemon mounts the layer on it.
Taking it off reverses that, so a process started without the layer finds its data
where it always was, as the last cut left it.

The mount lives in the node's mount namespace (a local node's sshd runs in one of its
own), so it is looked for in /proc/self/mountinfo of a command run over SSH.
"""
from __future__ import annotations

import importlib.util
import json
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from clusters.db import DatabaseError
from clusters.nodes.ssh import NodeSession

DAEMON_SOURCE = Path(__file__).with_name("powerfs_daemon.py")
FSTYPE = "fuse.powerfs"
# a database setting: the node's data on the layer at each start (KafkaConfig), with the
# names model it says: "true" or "journal" (ext4-like), "posix" (a directory fsync only)
POWERFS_KEY = "logtrial.powerfs"
JOURNAL, POSIX = "journal", "posix"
NAMES_MODELS = {"true": JOURNAL, JOURNAL: JOURNAL, POSIX: POSIX}
OFF = ("false", "0", "no", "")
CLEAN, TORN = "clean", "torn"
MOUNT_TIMEOUT_S = 20.0
EXIT_TIMEOUT_S = 10.0
HISTORY_LIMIT = 20  # files and name changes a history entry lists one by one, per node


def mfusepy_source() -> Path:
    """mfusepy's one module, uploaded beside the daemon (found without importing it: the
    import needs libfuse, which the control node may lack)."""
    spec = importlib.util.find_spec("mfusepy")
    if spec is None or not spec.origin:
        raise DatabaseError("control", "mfusepy is not installed here (pip install -e .)")
    return Path(spec.origin)


def names_model(value: str) -> str | None:
    """The names model a POWERFS_KEY value asks for, None for no layer; ValueError naming
    the setting for anything else."""
    value = value.strip().lower()
    if value in OFF:
        return None
    if value not in NAMES_MODELS:
        raise ValueError(f"{POWERFS_KEY}={value!r}: expected true, {JOURNAL}, {POSIX} or false")
    return NAMES_MODELS[value]


@dataclass(frozen=True)
class LayerPaths:
    """Where one directory's layer keeps what, on its node."""
    directory: str  # the mount point: where the processes see their data
    home: str       # the node's home

    @property
    def backing(self) -> str:
        return f"{self.directory}.powerfs-disk"

    @property
    def grave(self) -> str:
        return f"{self.directory}.powerfs-grave"

    @property
    def state_dir(self) -> str:
        slug = self.directory.removeprefix(self.home).strip("/").replace("/", "-") or "root"
        return f"{self.home}/powerfs/{slug}"

    @property
    def pid_file(self) -> str:
        return f"{self.state_dir}/daemon.pid"

    @property
    def socket(self) -> str:
        return f"{self.state_dir}/control.sock"

    @property
    def log_file(self) -> str:
        return f"{self.state_dir}/daemon.log"


def bin_dir(session: NodeSession) -> str:
    return f"{session.node.home}/powerfs/bin"


def layer_paths(session: NodeSession, directory: str) -> LayerPaths:
    return LayerPaths(directory.rstrip("/"), session.node.home)


def mounted(session: NodeSession) -> list[str]:
    """The node's powerfs mount points (field 5 of mountinfo; the type follows ' - ')."""
    text = session.exec("cat /proc/self/mountinfo", timeout=15).stdout
    points = []
    for line in text.splitlines():
        fields, _, rest = line.partition(" - ")
        if rest.split(" ", 1)[0] == FSTYPE:
            points.append(fields.split(" ")[4].replace("\\040", " "))
    return points


def is_on_layer(session: NodeSession, directory: str) -> bool:
    return layer_paths(session, directory).directory in mounted(session)


def present(session: NodeSession, directory: str) -> bool:
    """Whether anything of a layer is there for `directory` (a mount or data moved
    aside), in one command: a launch without the layer asks it every time."""
    paths = layer_paths(session, directory)
    check = (f"grep -q {shlex.quote(' ' + paths.directory + ' ')} /proc/self/mountinfo || "
             f"[ -d {shlex.quote(paths.backing)} ]")
    return session.exec(check, check=False, timeout=15).exit_code == 0


def mount(session: NodeSession, directory: str, names: str = JOURNAL) -> None:
    """Puts `directory` on the layer (a no-op if it is, with a live daemon), name changes
    durable as `names` says (JOURNAL or POSIX). DatabaseError with the daemon's log if the
    mount does not appear in time."""
    paths = layer_paths(session, directory)
    if paths.directory in mounted(session):
        if session.pid_alive(paths.pid_file):
            return
        unmount(session, directory)  # its daemon died: the mount answers nothing
    _upload(session)
    d, backing = shlex.quote(paths.directory), shlex.quote(paths.backing)
    # a backing directory already there was left by a layer that died: it holds the data
    session.exec(f"mkdir -p {d} && {{ [ -d {backing} ] || mv {d} {backing}; }} && mkdir -p {d} "
                 f"{shlex.quote(paths.grave)} {shlex.quote(paths.state_dir)}", timeout=30)
    command = (f"python3 {shlex.quote(bin_dir(session))}/powerfs_daemon.py mount {backing} {d} "
               f"{shlex.quote(paths.socket)} {shlex.quote(paths.grave)} {shlex.quote(names)}")
    session.start_daemon(command, paths.pid_file, paths.log_file)
    deadline = time.monotonic() + MOUNT_TIMEOUT_S
    while paths.directory not in mounted(session):
        if time.monotonic() > deadline or not session.pid_alive(paths.pid_file):
            log = session.exec(f"tail -n 20 {shlex.quote(paths.log_file)}", check=False, timeout=15).stdout
            unmount(session, directory)
            raise DatabaseError(session.node.name, f"powerfs did not mount on {paths.directory}; "
                                f"its log:\n{log}")
        time.sleep(0.1)


def _upload(session: NodeSession) -> None:
    session.exec(f"mkdir -p {shlex.quote(bin_dir(session))}", timeout=15)
    for source in (DAEMON_SOURCE, mfusepy_source()):
        session.upload(source, f"{bin_dir(session)}/{source.name}")


def cut(session: NodeSession, directory: str, mode: str = CLEAN) -> dict:
    """Cuts the layer's power: from now on it answers EIO, and every write and name change
    not made durable is forgotten (`torn`: each file keeps the first half of its last
    unsynced write). Returns what it dropped ({"files", "bytes", "kept", "names",
    "file_list", "name_list"}); DatabaseError if the layer does not answer."""
    if mode not in (CLEAN, TORN):
        raise ValueError(f"powerfs cut mode {mode!r}: expected {CLEAN} or {TORN}")
    paths = layer_paths(session, directory)
    result = session.exec(f"python3 {shlex.quote(bin_dir(session))}/powerfs_daemon.py cut "
                          f"{shlex.quote(paths.socket)} {mode}", check=False, timeout=120)
    try:
        reply = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise DatabaseError(session.node.name, f"powerfs on {paths.directory} did not answer the cut: "
                            f"{(result.stderr or result.stdout).strip()[-400:]}") from None
    if "error" in reply:
        raise DatabaseError(session.node.name, f"powerfs on {paths.directory}: {reply['error']}")
    return reply


def summarize(reports: dict[str, dict]) -> dict:
    """One node's cut reports ({directory: report}) as its history entry: the totals,
    and the files and name changes it dropped (a few, by path; the totals count all)."""
    totals = {key: sum(report[key] for report in reports.values()) for key in ("files", "bytes", "kept", "names")}
    files = [{**entry, "path": f"{directory}{entry['path']}"} for directory, report in reports.items()
             for entry in report["file_list"] if entry["written"] or entry["size_before"] != entry["size_after"]]
    files.sort(key=lambda entry: -entry["written"])  # the records lost first, preallocated indexes after
    names = [{**entry, **{key: f"{directory}{entry[key]}" for key in ("path", "new") if key in entry}}
             for directory, report in reports.items() for entry in report["name_list"]]
    return {**totals, "mode": next(iter(reports.values()))["mode"] if reports else CLEAN,
            "file_list": files[:HISTORY_LIMIT], "name_list": names[:HISTORY_LIMIT]}


def unmount(session: NodeSession, directory: str) -> list[str]:
    """Takes `directory` off the layer, whatever state it is in (a dead daemon, a cut
    layer, a half-made mount): unmounts (lazily if busy), ends the daemon by its pid
    file, moves the backing data back. Idempotent; returns what it did. The caller has
    stopped the processes using the directory."""
    paths = layer_paths(session, directory)
    node, done = session.node.name, []
    d = shlex.quote(paths.directory)
    if paths.directory in mounted(session):
        session.exec(f"fusermount3 -u {d} 2>/dev/null || fusermount3 -u -z {d}", timeout=30)
        done.append(f"{node}: unmounted powerfs from {paths.directory}")
    if session.signal(paths.pid_file, "TERM") and not session.wait_exit(paths.pid_file, EXIT_TIMEOUT_S):
        session.signal(paths.pid_file, "KILL")
        session.wait_exit(paths.pid_file, EXIT_TIMEOUT_S)
    backing = shlex.quote(paths.backing)
    moved = session.exec(f"if [ -d {backing} ]; then rmdir {d} 2>/dev/null; "
                         f"if [ -e {d} ]; then echo busy; else mv {backing} {d} && echo moved; fi; fi",
                         timeout=30).stdout.strip()
    if moved == "busy":
        raise DatabaseError(node, f"cannot move {paths.backing} back: {paths.directory} is not "
                            "empty (something wrote into the bare mount point)")
    if moved == "moved":
        done.append(f"{node}: moved {paths.directory}'s data back from the powerfs backing directory")
    session.exec(f"rm -rf {shlex.quote(paths.grave)} {shlex.quote(paths.socket)}", timeout=60)
    return done


def broken(session: NodeSession, directory: str) -> str | None:
    """Why the layer on `directory` cannot serve a process (its daemon is dead, its power
    was cut, its data is moved aside with nothing mounted), or None: absent or healthy."""
    paths = layer_paths(session, directory)
    if paths.directory not in mounted(session):
        return f"data moved aside to {paths.backing}, nothing mounted" if present(session, directory) else None
    if not session.pid_alive(paths.pid_file):
        return f"powerfs on {paths.directory} has lost its daemon"
    status = session.exec(f"python3 {shlex.quote(bin_dir(session))}/powerfs_daemon.py status "
                          f"{shlex.quote(paths.socket)}", check=False, timeout=30).stdout.strip()
    if '"frozen": false' not in status:
        return f"powerfs on {paths.directory} was cut or does not answer ({status or 'no reply'})"
    return None


def leftovers(session: NodeSession, directory: str) -> list[str]:
    """What of the layer is on the node for `directory`: a mount, a live daemon, data
    moved aside."""
    paths = layer_paths(session, directory)
    found = []
    if paths.directory in mounted(session):
        found.append(f"powerfs mounted on {paths.directory}")
    if session.pid_alive(paths.pid_file):
        found.append(f"powerfs daemon running ({paths.pid_file})")
    if session.exec(f"[ -d {shlex.quote(paths.backing)} ]", check=False, timeout=15).exit_code == 0:
        found.append(f"data moved aside to {paths.backing}")
    return found
