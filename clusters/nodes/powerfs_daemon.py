"""powerfs: a FUSE layer that forgets, on command, whatever was never made durable.

It runs ON THE NODE (uploaded and started over SSH as a daemon under a pid file, like
the packet holder), so it needs only the standard library and mfusepy (uploaded beside
it) on top of libfuse3. It passes every operation through to a backing directory, and
remembers what a power loss would take:

- data: per file (by inode, so renames do not matter), the size at its last fsync /
  fdatasync and, for each 4 KiB block inside that size first overwritten or cut off
  since then, the block's synced content. A write to a file opened O_SYNC / O_DSYNC is
  synced as it lands. Forgetting truncates the file to its synced size and puts the
  saved blocks back: exactly the synced bytes, whatever happened in between.
- names: a journal of creations, deletions, renames, mkdir and rmdir. In the `posix`
  model an entry becomes durable when a directory it touches is fsynced (the POSIX
  minimum: fsyncing the file does not make its name durable). In the `journal` model
  (the default) any fsync makes every earlier entry durable, as ext4's one running
  journal transaction does. Deleted and replaced files are parked in a "grave"
  directory beside the backing one until then, so an undone deletion brings them back.
  Forgetting undoes the journal's remaining entries, newest first.

`cut` (over the unix socket) freezes the file system (every later operation gets EIO,
as a machine without power answers nothing), forgets, and replies with what it dropped.
The torn mode keeps the first half of each file's last unsynced write, as a disk that
lost power in the middle of it. The controller then kills the node's processes and
unmounts. A plain unmount (no cut) keeps everything: a clean shutdown syncs.

Usage:  powerfs_daemon.py mount BACKING MOUNTPOINT SOCKET GRAVE [journal|posix]
        powerfs_daemon.py cut SOCKET [torn]  |  powerfs_daemon.py status SOCKET
"""
from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import socket
import sys
import threading
from dataclasses import dataclass, field

BLOCK = 4096
CLEAN, TORN = "clean", "torn"
JOURNAL, POSIX = "journal", "posix"  # when a name change becomes durable (the docstring)
REPORT_LIMIT = 200  # files and names listed one by one in a reply; the totals count all


@dataclass
class FileState:
    """One file's writes since its last sync. `fd` is our own descriptor, so that a
    forget reaches the file whatever its name is by then."""
    fd: int
    path: str
    synced_size: int
    saved: dict[int, bytes] = field(default_factory=dict)  # block -> its synced content
    written: int = 0                                        # bytes written since the sync
    last_write: tuple[int, bytes] | None = None


@dataclass
class NameOp:
    """A namespace change not yet durable. `dirs`: the directories whose fsync makes it so."""
    op: str            # create, mkdir, unlink, rmdir, rename
    path: str
    dirs: frozenset[str]
    ino: int = 0       # the inode created or moved (undo checks it is still that one)
    new: str = ""      # rename's target
    grave: str = ""    # where a deleted or replaced file waits
    mode: int = 0o755  # rmdir's directory mode


def parent(path: str) -> str:
    return os.path.dirname(path.rstrip("/")) or "/"


class PowerState:
    """What the layer would lose, and the forgetting. Every method runs under the lock."""

    def __init__(self, root: str, grave: str, names_model: str = JOURNAL) -> None:
        if names_model not in (JOURNAL, POSIX):
            raise ValueError(f"unknown names model {names_model!r} ({JOURNAL} or {POSIX})")
        self.root, self.grave, self.names_model = root, grave, names_model
        self.files: dict[int, FileState] = {}
        self.names: list[NameOp] = []
        self.graves = 0
        self.frozen = False

    def full(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    # -- data ---------------------------------------------------------------------------
    def state_for(self, fd: int, path: str) -> FileState:
        st = os.fstat(fd)
        state = self.files.get(st.st_ino)
        if state is None:
            state = self.files[st.st_ino] = FileState(os.dup(fd), path, st.st_size)
        state.path = path or state.path
        return state

    def save_blocks(self, state: FileState, start: int, end: int) -> None:
        """Saves the synced content of every block of [start, end) inside the synced size
        that is not saved yet: the first change since the sync is the one to undo."""
        end = min(end, state.synced_size)
        if end <= start:
            return
        for block in range(start // BLOCK, (end - 1) // BLOCK + 1):
            if block not in state.saved:
                length = min(BLOCK, state.synced_size - block * BLOCK)
                state.saved[block] = os.pread(state.fd, length, block * BLOCK)

    def write(self, fd: int, path: str, data: bytes, offset: int) -> int:
        state = self.state_for(fd, path)
        self.save_blocks(state, offset, offset + len(data))
        written = os.pwrite(fd, data, offset)
        state.written += written
        state.last_write = (offset, bytes(data[:written]))
        return written

    def truncate(self, fd: int, path: str, length: int) -> None:
        state = self.state_for(fd, path)
        self.save_blocks(state, length, state.synced_size)
        os.ftruncate(fd, length)
        state.last_write = None

    def synced(self, fd: int) -> None:
        state = self.files.pop(os.fstat(fd).st_ino, None)
        if state is not None:
            os.close(state.fd)
        if self.names_model == JOURNAL:
            self.commit_names(lambda entry: True)

    def forget_data(self, mode: str) -> list[dict]:
        dropped = []
        for state in self.files.values():
            size = os.fstat(state.fd).st_size
            os.ftruncate(state.fd, state.synced_size)
            for block, content in state.saved.items():
                os.pwrite(state.fd, content, block * BLOCK)
            kept = 0
            if mode == TORN and state.last_write:
                offset, data = state.last_write
                kept = os.pwrite(state.fd, data[:len(data) // 2], offset) if len(data) > 1 else 0
            dropped.append({"path": state.path, "written": state.written, "size_before": size,
                            "size_after": os.fstat(state.fd).st_size, "kept": kept})
            os.close(state.fd)
        self.files.clear()
        return dropped

    # -- names --------------------------------------------------------------------------
    def to_grave(self, path: str) -> str:
        """Moves a file or directory out of the way (kept until its removal is durable)."""
        self.graves += 1
        grave = os.path.join(self.grave, str(self.graves))
        os.rename(self.full(path), grave)
        return grave

    def journal(self, entry: NameOp) -> None:
        self.names.append(entry)

    def dir_synced(self, path: str) -> None:
        if self.names_model == JOURNAL:
            self.commit_names(lambda entry: True)
        else:
            self.commit_names(lambda entry: path in entry.dirs)

    def commit_names(self, durable) -> None:
        """Forgets the entries `durable(entry)` says are durable now (their graves go)."""
        kept = []
        for entry in self.names:
            if durable(entry):
                if entry.grave:
                    remove(entry.grave)
            else:
                kept.append(entry)
        self.names = kept

    def forget_names(self) -> list[dict]:
        undone = []
        for entry in reversed(self.names):
            try:
                self.undo(entry)
                undone.append({"op": entry.op, "path": entry.path, **({"new": entry.new} if entry.new else {})})
            except OSError as e:  # reported; the rest is still undone
                undone.append({"op": entry.op, "path": entry.path, "error": str(e)})
        self.names.clear()
        return undone

    def undo(self, entry: NameOp) -> None:
        full = self.full(entry.path)
        if entry.op in ("create", "mkdir"):
            if os.path.lexists(full) and os.lstat(full).st_ino == entry.ino:
                remove(full)
        elif entry.op == "unlink":
            os.rename(entry.grave, full)
        elif entry.op == "rmdir":
            if not os.path.lexists(full):
                os.mkdir(full, entry.mode)
        elif entry.op == "rename":
            new = self.full(entry.new)
            if os.path.lexists(new) and os.lstat(new).st_ino == entry.ino:
                os.rename(new, full)
            if entry.grave:
                os.rename(entry.grave, new)

    def cut(self, mode: str) -> dict:
        self.frozen = True
        files = self.forget_data(mode)
        names = self.forget_names()
        return {"mode": mode, "files": len([f for f in files if f["written"] or f["size_before"] != f["size_after"]]),
                "bytes": sum(f["written"] for f in files), "kept": sum(f["kept"] for f in files),
                "names": len(names), "file_list": files[:REPORT_LIMIT], "name_list": names[:REPORT_LIMIT]}

    def status(self) -> dict:
        return {"frozen": self.frozen, "names_model": self.names_model, "files": len(self.files),
                "bytes": sum(s.written for s in self.files.values()), "names": len(self.names)}


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def make_operations(state: PowerState, lock: threading.RLock):
    """The mfusepy Operations passing through to the backing directory (imported here:
    the control side reuses this module's client without libfuse)."""
    import mfusepy
    from mfusepy import FuseOSError

    def guarded(method):
        """Runs an operation under the lock, EIO once the power is cut; OSErrors become
        FUSE errors."""
        def run(self, *args):
            with lock:
                if state.frozen:
                    raise FuseOSError(errno.EIO)
                try:
                    return method(self, *args)
                except OSError as e:
                    raise FuseOSError(e.errno or errno.EIO) from None
        return functools.wraps(method)(run)

    strip = os.O_ACCMODE | os.O_APPEND | os.O_DSYNC | os.O_SYNC | os.O_TRUNC

    def owned_by_caller(path: str) -> None:
        """What the daemon (root) created belongs to the process that asked, as on a
        disk: PostgreSQL, which runs as its own user, must own its data dir's files."""
        uid, gid, _ = mfusepy.fuse_get_context()
        if uid != os.geteuid() or gid != os.getegid():
            os.chown(state.full(path), uid, gid, follow_symlinks=False)

    class Operations(mfusepy.Operations):
        use_ns = True

        def __init__(self) -> None:
            self.sync_fhs: set[int] = set()

        def _open(self, path: str, flags: int, mode: int = 0o644) -> int:
            # always read-write, never append (the kernel gives the offset): the layer
            # must read a block before overwriting it, and write it back on a cut
            fd = os.open(state.full(path), (flags & ~strip) | os.O_RDWR, mode)
            if flags & os.O_DSYNC:  # O_SYNC includes it
                self.sync_fhs.add(fd)
            if flags & os.O_TRUNC:
                state.truncate(fd, path, 0)
            return fd

        @guarded
        def open(self, path, flags):
            return self._open(path, flags)

        @guarded
        def create(self, path, mode, flags=os.O_WRONLY):
            existed = os.path.lexists(state.full(path))
            fd = self._open(path, flags | os.O_CREAT, mode)
            if not existed:
                owned_by_caller(path)
                state.journal(NameOp("create", path, frozenset({parent(path)}), ino=os.fstat(fd).st_ino))
            return fd

        def read(self, path, size, offset, fh):
            if state.frozen:
                raise FuseOSError(errno.EIO)
            return os.pread(fh, size, offset)

        @guarded
        def write(self, path, data, offset, fh):
            written = state.write(fh, path, data, offset)
            if fh in self.sync_fhs:
                state.synced(fh)
            return written

        @guarded
        def truncate(self, path, length, fh=None):
            fd = fh if fh is not None else os.open(state.full(path), os.O_RDWR)
            try:
                state.truncate(fd, path, length)
            finally:
                if fh is None:
                    os.close(fd)

        @guarded
        def fsync(self, path, datasync, fh):
            state.synced(fh)
            return 0

        @guarded
        def fsyncdir(self, path, datasync, fh):
            state.dir_synced(path)
            return 0

        def flush(self, path, fh):
            return 0

        def release(self, path, fh):
            with lock:
                self.sync_fhs.discard(fh)
                os.close(fh)
            return 0

        def getattr(self, path, fh=None):
            if state.frozen:
                raise FuseOSError(errno.EIO)
            try:
                st = os.fstat(fh) if fh is not None else os.lstat(state.full(path))
            except OSError as e:
                raise FuseOSError(e.errno) from None
            attrs = {key: getattr(st, key) for key in (
                "st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_blocks", "st_ino")}
            return attrs | {key: getattr(st, f"{key}_ns") for key in ("st_atime", "st_mtime", "st_ctime")}

        def readdir(self, path, fh):
            if state.frozen:
                raise FuseOSError(errno.EIO)
            return [".", "..", *os.listdir(state.full(path))]

        def readlink(self, path):
            return os.readlink(state.full(path))

        def statfs(self, path):
            st = os.statvfs(state.full(path))
            return {key: getattr(st, key) for key in (
                "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files",
                "f_flag", "f_frsize", "f_namemax")}

        def access(self, path, amode):
            if not os.access(state.full(path), amode):
                raise FuseOSError(errno.EACCES)
            return 0

        @guarded
        def chmod(self, path, mode):
            os.chmod(state.full(path), mode)
            return 0

        @guarded
        def chown(self, path, uid, gid):
            os.chown(state.full(path), uid, gid, follow_symlinks=False)
            return 0

        @guarded
        def utimens(self, path, times=None):
            os.utime(state.full(path), ns=times, follow_symlinks=False)
            return 0

        @guarded
        def mkdir(self, path, mode):
            os.mkdir(state.full(path), mode)
            owned_by_caller(path)
            state.journal(NameOp("mkdir", path, frozenset({parent(path)}), ino=os.lstat(state.full(path)).st_ino))
            return 0

        @guarded
        def symlink(self, target, source):
            os.symlink(source, state.full(target))
            owned_by_caller(target)
            state.journal(NameOp("create", target, frozenset({parent(target)}),
                                 ino=os.lstat(state.full(target)).st_ino))
            return 0

        @guarded
        def unlink(self, path):
            state.journal(NameOp("unlink", path, frozenset({parent(path)}), grave=state.to_grave(path)))
            return 0

        @guarded
        def rmdir(self, path):
            full = state.full(path)
            if os.listdir(full):
                raise FuseOSError(errno.ENOTEMPTY)
            mode = os.lstat(full).st_mode & 0o7777
            os.rmdir(full)
            state.journal(NameOp("rmdir", path, frozenset({parent(path)}), mode=mode))
            return 0

        @guarded
        def rename(self, old, new):
            ino = os.lstat(state.full(old)).st_ino
            grave = ""
            if os.path.lexists(state.full(new)):
                if os.path.isdir(state.full(new)) and os.listdir(state.full(new)):
                    raise FuseOSError(errno.ENOTEMPTY)
                grave = state.to_grave(new)
            os.rename(state.full(old), state.full(new))
            state.journal(NameOp("rename", old, frozenset({parent(old), parent(new)}), ino=ino,
                                 new=new, grave=grave))
            return 0

    return Operations()


# -- the control socket ---------------------------------------------------------------
def serve_control(sock_path: str, state: PowerState, lock: threading.RLock) -> None:
    """One JSON request per connection: {"cmd": "status"} or {"cmd": "cut", "mode": ...}."""
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sock_path)
    server.listen(4)
    while True:
        conn, _ = server.accept()
        with conn:
            try:
                request = json.loads(conn.makefile().readline())
                with lock:
                    if request.get("cmd") == "cut":
                        mode = request.get("mode", CLEAN)
                        if mode not in (CLEAN, TORN):
                            raise ValueError(f"unknown cut mode {mode!r} (clean or torn)")
                        reply = state.cut(mode) if not state.frozen else {"error": "already cut"}
                    elif request.get("cmd") == "status":
                        reply = state.status()
                    else:
                        raise ValueError(f"unknown command {request.get('cmd')!r} (status or cut)")
            except Exception as e:  # noqa: BLE001 - the client is told, the daemon goes on
                reply = {"error": f"{type(e).__name__}: {e}"}
            conn.sendall((json.dumps(reply) + "\n").encode())


def request(sock_path: str, message: dict, timeout: float = 60) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(sock_path)
        conn.sendall((json.dumps(message) + "\n").encode())
        return json.loads(conn.makefile().readline())


def mount(backing: str, mountpoint: str, sock_path: str, grave: str, names_model: str = JOURNAL) -> None:
    os.environ.setdefault("FUSE_LIBRARY_PATH", "libfuse3.so.3")  # ldconfig's cache may lack it
    import mfusepy
    backing, mountpoint, sock_path, grave = map(os.path.abspath, (backing, mountpoint, sock_path, grave))
    os.makedirs(grave, exist_ok=True)
    state, lock = PowerState(backing, grave, names_model), threading.RLock()
    threading.Thread(target=serve_control, args=(sock_path, state, lock), daemon=True).start()
    mfusepy.FUSE(make_operations(state, lock), mountpoint, foreground=True, fsname="powerfs",
                 subtype="powerfs", default_permissions=True, allow_other=True,
                 debug=bool(os.environ.get("POWERFS_DEBUG")))


def main(argv: list[str]) -> int:
    usage = __doc__.split("Usage:")[1]
    if len(argv) in (5, 6) and argv[0] == "mount":
        mount(*argv[1:])
        return 0
    if len(argv) in (2, 3) and argv[0] == "cut":
        reply = request(argv[1], {"cmd": "cut", "mode": argv[2] if len(argv) == 3 else CLEAN})
    elif len(argv) == 2 and argv[0] == "status":
        reply = request(argv[1], {"cmd": "status"})
    else:
        print(f"usage:{usage}", file=sys.stderr)
        return 2
    print(json.dumps(reply))
    return 1 if "error" in reply else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
