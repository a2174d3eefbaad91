"""Trees the agent built: walked with a stack of folders, never by recursion, and removed whatever
they hold.

Example::

    for parent, dirnames, filenames in walk(workspace):       # os.walk's shape, top down
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]   # pruned as with os.walk
    remove_tree(base)   # 1,500 levels, paths past PATH_MAX, folders without r or x, +i and +a flags

Python 3.11's ``os.walk``, ``shutil.rmtree`` and ``Path.glob("**")`` recurse once per folder level,
so a folder the agent nested past the interpreter's recursion limit (1,000) made the harness raise
``RecursionError``: the agent's doing booked as the harness's fault, and its sandbox left on the host.
:func:`walk` keeps its own stack. :func:`remove_tree` goes further, because removal must work on any
tree at all, including one no snapshot would take: it works relative to open folder descriptors (so
a path longer than the system's 4,096 bytes is no obstacle), holds one descriptor at a time (so depth
costs memory, not descriptors), gives itself the read, write and search bits a folder lacks, clears
the immutable and append-only flags an agent running as root may have set, and never crosses into
another filesystem (a mount inside the tree is detached, never emptied).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import re
import stat
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from coder_eval.errors import SandboxError

OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPEN_ENTRY = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
"""The ioctls ``lsattr`` and ``chattr`` use (``linux/fs.h``)."""
UNREMOVABLE_FLAGS = 0x10 | 0x20
"""``FS_IMMUTABLE_FL`` (``chattr +i``) and ``FS_APPEND_FL`` (``chattr +a``)."""
OWNER_ALL = stat.S_IRWXU


def walk(root: str | os.PathLike[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(root)`` (top down, links not followed, unreadable folders skipped), without recursion.

    Example: ``[p for p, _, _ in walk("w")]`` -> ``["w", "w/a", "w/a/b"]`` for ``w/a/b/``. A link to
    a folder is listed among ``dirnames``, as ``os.walk`` lists it, and not entered; a caller may
    prune ``dirnames`` in place.
    """
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        dirnames: list[str] = []
        filenames: list[str] = []
        links: set[str] = set()
        try:
            with os.scandir(top) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    (dirnames if is_dir else filenames).append(entry.name)
                    if is_dir and entry.is_symlink():
                        links.add(entry.name)
        except OSError:
            continue
        yield top, dirnames, filenames
        stack.extend(f"{top}/{name}" for name in reversed(dirnames) if name not in links)


def remove_tree(base: Path, attempts: int = 3) -> None:
    """Remove ``base`` and everything below it, whatever the agent made of it (see the module
    docstring); a missing ``base`` is fine.

    Example: ``remove_tree(Path("/tmp/coder_eval-x1"))`` -> None, the folder gone, also when it
    holds ``work/d/d/…`` 1,500 levels deep, a folder of mode 000 and a file under ``chattr +i``.

    A mount inside the tree (an agent running as root under ``tempdir`` can make one) is detached
    first, never emptied. A process killed a moment ago may still be finishing a write, so a failure
    is retried briefly; what still cannot be removed raises ``SandboxError`` naming the sandbox and why.
    """
    if os.path.lexists(base):
        detach_mounts(base)  # a bind mount of a host folder shares its device: never entered
    for attempt in range(1, attempts + 1):
        try:
            parent = os.open(base.parent, OPEN_FOLDER)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise SandboxError(f"cannot remove the sandbox at {base}: {exc}") from exc
        try:
            _remove_entry(parent, base.name, own_parent=False)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if attempt == attempts:
                raise SandboxError(f"cannot remove the sandbox at {base}: {exc}") from exc
            time.sleep(0.1)
        finally:
            os.close(parent)


MNT_DETACH = 2
"""``umount2`` flag: detach the mount now, whatever still uses it (``umount --lazy``)."""
_ESCAPED = re.compile(r"\\([0-7]{3})")


def mount_field(text: str) -> str:
    """A path field of ``/proc/self/mountinfo`` as the path it names (the kernel writes a space,
    tab, newline or backslash in it as an octal escape).

    Example: ``mount_field("/mnt/a\\040b")`` -> ``"/mnt/a b"``.
    """
    return _ESCAPED.sub(lambda m: chr(int(m[1], 8)), text)


def detach_mounts(base: Path) -> list[str]:
    """Detach every mount whose mount point lies inside ``base``, deepest first (needs the
    privilege that made them); the mount points detached.

    Example: after ``mount -t tmpfs none /tmp/coder_eval-x1/work/m`` in the harness's own mount
    namespace, ``detach_mounts(Path("/tmp/coder_eval-x1"))`` -> ``["/tmp/coder_eval-x1/work/m"]``.
    """
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return []
    inside = f"{base}/"
    points = [mount_field(line.split(" ")[4]) for line in lines.splitlines()]
    detached = []
    libc = ctypes.CDLL(None, use_errno=True)
    for point in sorted((p for p in points if p.startswith(inside)), key=len, reverse=True):
        if libc.umount2(os.fsencode(point), MNT_DETACH) == 0:
            detached.append(point)
    return detached


def _remove_entry(parent: int, name: str, *, own_parent: bool = True) -> None:
    """Remove ``name`` in the folder open as ``parent`` (a folder with everything in it)."""
    info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if stat.S_ISDIR(info.st_mode):
        _empty(parent, name, info.st_dev)
        _retried(os.rmdir, parent, name, own_parent)
    else:
        _retried(os.unlink, parent, name, own_parent)


@dataclass
class _Level:
    """A folder being emptied: its name in the level above, who it is, the subfolders left."""

    name: str
    ids: tuple[int, int]
    pending: list[str] = field(default_factory=list)


def _empty(parent: int, name: str, device: int) -> None:
    """Remove everything inside folder ``name`` of ``parent``, depth first with one descriptor held:
    down by name, back up through ``..`` (checked to be the folder it came from)."""
    fd = _open_folder(parent, name)
    try:
        levels = [_Level(name, _ids(fd), _clear_files(fd))]
        while levels:
            level = levels[-1]
            if level.pending:
                child = level.pending.pop()
                down = _descend(fd, child, device)
                if down is not None:
                    os.close(fd)
                    fd = down
                    levels.append(_Level(child, _ids(fd), _clear_files(fd)))
                continue
            levels.pop()
            if levels:
                up = _ascend(fd, levels[-1].ids)
                os.close(fd)
                fd = up
                _retried(os.rmdir, fd, level.name, True)
    finally:
        os.close(fd)


def _descend(fd: int, child: str, device: int) -> int | None:
    """The descriptor of subfolder ``child`` of ``fd``, or None when it is gone."""
    try:
        down = _open_folder(fd, child)
    except FileNotFoundError:
        return None
    if os.fstat(down).st_dev != device:
        os.close(down)
        raise OSError(errno.EXDEV, f"{child!r} is a mount point; it is left as it is")
    return down


def _ascend(fd: int, expected: tuple[int, int]) -> int:
    """The descriptor of the folder above ``fd``, if it is the one the walk came down from."""
    up = os.open("..", OPEN_FOLDER, dir_fd=fd)
    if _ids(up) != expected:
        os.close(up)
        raise OSError(errno.ESTALE, "a folder moved while the tree was being removed")
    return up


def _open_folder(parent: int, name: str) -> int:
    """Open subfolder ``name`` of ``parent``, giving it its owner's bits when it has none to open by."""
    try:
        fd = os.open(name, OPEN_FOLDER, dir_fd=parent)
    except PermissionError:
        os.chmod(name, OWNER_ALL, dir_fd=parent)  # a folder (lstat said so); no process can swap it now
        fd = os.open(name, OPEN_FOLDER, dir_fd=parent)
    mode = os.fstat(fd).st_mode
    if mode & OWNER_ALL != OWNER_ALL:  # so its entries can be removed and its folders entered
        try:
            os.fchmod(fd, mode | OWNER_ALL)
        except PermissionError:  # immutable: cleared, then tried again; root needs no bits anyway
            _clear_flags(fd)
            with contextlib.suppress(PermissionError):
                os.fchmod(fd, mode | OWNER_ALL)
    return fd


def _clear_files(fd: int) -> list[str]:
    """Remove every entry of the folder open as ``fd`` that is not a folder; the subfolders' names."""
    folders = []
    with os.scandir(fd) as entries:
        names = [(entry.name, _is_folder(entry)) for entry in entries]
    for name, is_folder in names:
        if is_folder:
            folders.append(name)
            continue
        try:
            _retried(os.unlink, fd, name, True)
        except FileNotFoundError:
            continue
    return folders


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _retried(remove: Callable[..., None], folder: int, name: str, own_folder: bool) -> None:
    """``remove(name, dir_fd=folder)``; refused for a flag (``EPERM``), the flags of the entry (and of
    ``folder``, when it is the sandbox's own) are cleared and it is tried once more."""
    try:
        remove(name, dir_fd=folder)
    except PermissionError:
        if own_folder:
            _clear_flags(folder)
        _clear_entry_flags(folder, name)
        remove(name, dir_fd=folder)


def _clear_entry_flags(folder: int, name: str) -> None:
    """Clear the flags of ``name`` when it is a file or folder (a device or pipe is never opened)."""
    info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return
    try:
        fd = os.open(name, OPEN_ENTRY, dir_fd=folder)
    except OSError:
        return
    try:
        _clear_flags(fd)
    finally:
        os.close(fd)


def _clear_flags(fd: int) -> None:
    """Take ``chattr +i`` and ``+a`` off what ``fd`` is open on (needs root; otherwise nothing changes)."""
    try:
        (flags,) = struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 4))
        if flags & UNREMOVABLE_FLAGS:
            fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", flags & ~UNREMOVABLE_FLAGS))
    except OSError:
        pass


def _ids(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino
