"""What an input path is when it is not what a reader wants: a FIFO, a socket, a device, a symlink loop.

Example::

    not_readable(Path("tasks/pipe.yaml"))     # 'a FIFO, not a regular file'
    not_readable(Path("tasks/loop.yaml"))     # 'a symlink loop'
    not_readable(Path("tasks/a.yaml"))        # None: a regular file (or a link to one)

Task folders may hold such things (a FIFO left by a tool, a socket of a running server); coder_eval
never opens them (reading a FIFO blocks until someone writes, a device may never end): a search
skips them with a note, and a file given by name that is one is refused saying what it is.
"""

from __future__ import annotations

import errno
import stat
from pathlib import Path

KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


def is_special(mode: int) -> bool:
    """Not a regular file, a folder or a link: a FIFO, a socket, a device."""
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def kind(mode: int) -> str:
    """``a FIFO``, ``a socket``, ``a device``."""
    return KINDS.get(stat.S_IFMT(mode), "not a regular file")


def not_readable(path: Path, *, want_dir: bool = False) -> str | None:
    """Why ``path`` (links followed) is not a regular file (``want_dir``: a folder) to read, or None."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop"
        return "not found" if exc.errno in (errno.ENOENT, errno.ENOTDIR) else (exc.strerror or str(exc))
    if want_dir:
        return None if stat.S_ISDIR(mode) else "not a directory"
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    return f"{kind(mode)}, not a regular file" if is_special(mode) else None
