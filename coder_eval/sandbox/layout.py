"""Where things live in a sandbox: a host folder (``tempdir``, ``bwrap``) or a container (``docker``).

Example::

    layout = SandboxLayout(Path("/tmp/coder_eval-x1"))
    layout.work    # the workspace: the agent's working directory, seeded from the task
    layout.home    # HOME and the XDG folders
    SandboxLayout(Path("/coder_eval"), workspace=Path("/workspace")).home   # /coder_eval/home (docker)

Layout of each sandbox directory (in a container, ``<base>`` is ``/coder_eval`` and the workspace is
the task's ``sandbox.docker.working_dir``)::

    <base>/work      the workspace (what criteria grade, what a snapshot holds)
    <base>/home      HOME, XDG config / cache / data / state
    <base>/tmp       TMPDIR
    <base>/bin       recording shims, first on the agent's PATH (read-only inside bwrap)
    <base>/run       Unix sockets of the harness: CLI recorder, model proxy (read-only inside bwrap)
    <base>/tools     harness files: the verifier's Python start-up and pytest plugin (read-only)
    <base>/verdicts  the verifier's test reports, outside the workspace
    <base>/plugins   plugins and skills staged from the host (read-only inside, ``plugins.py``)
    <base>/env       a per-sandbox virtualenv (``sandbox.python``)
    <base>/node_modules  npm packages (``sandbox.node``), found by Node from any workspace file
                     (beside the workspace: in a container, ``/node_modules`` for ``/workspace``)
    <base>/shown     on the host, the folders shown at fixed paths (``/tests`` -> ``shown/tests``,
                     ``Provision.shown_folders``), bound there by ``bwrap``

Only ``work`` is meant for the agent; the rest sits beside it, so a listing of the workspace shows
the task's files and nothing else. ``bin``, ``run``, ``tools`` and ``verdicts`` exist only in the
sandboxes that use them (the verifier has no shims; the agent's sandbox writes no verdicts), and the
verifier makes all but ``work`` at its first command (many graders only read files).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SAFE_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
"""System directories on every sandbox's PATH, after the shims, mock dirs and the interpreter's bin."""

PASSED_THROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")
"""The only host variables a sandbox inherits (when set); nothing else leaks in."""

FOLDERS = ("home", "tmp", "bin", "run", "tools", "verdicts", "plugins")
"""The folders beside the workspace; each sandbox makes those it uses (``Provision.folders``)."""

SOCKET_PATH_MAX = 107
"""Bytes a Unix socket's path may have (``sun_path`` less its closing NUL, on Linux)."""
LONGEST_SOCKET_TAIL = len("/coder_eval-12345678/run/recorder.sock")
"""What a sandbox adds to its parent folder's path for its longest socket (``host_socket``)."""
SHORT_ROOT = Path("/tmp")


def sandbox_root() -> Path:
    """The folder sandboxes are made in (and leftovers reaped from): the temporary folder
    (``$TMPDIR``), or ``/tmp`` when that path is too long for the harness's Unix sockets beside the
    workspace (a deep ``$TMPDIR``); every socket path would be refused otherwise.

    Example: with ``TMPDIR=/tmp`` -> ``Path("/tmp")``; with a 90-byte ``TMPDIR`` -> ``Path("/tmp")``.
    """
    root = Path(tempfile.gettempdir()).resolve()
    fits = len(os.fsencode(root)) + LONGEST_SOCKET_TAIL <= SOCKET_PATH_MAX
    return root if fits or not SHORT_ROOT.is_dir() else SHORT_ROOT


@dataclass(frozen=True)
class SandboxLayout:
    """The folders of one sandbox (see the module docstring); ``workspace`` puts the workspace
    elsewhere than ``<base>/work`` (a container's ``working_dir``)."""

    base: Path
    workspace: Path | None = None

    @property
    def work(self) -> Path:
        return self.workspace or self.base / "work"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def tmp(self) -> Path:
        return self.base / "tmp"

    @property
    def bin(self) -> Path:
        return self.base / "bin"

    @property
    def run(self) -> Path:
        return self.base / "run"

    @property
    def tools(self) -> Path:
        return self.base / "tools"

    @property
    def verdicts(self) -> Path:
        return self.base / "verdicts"

    @property
    def plugins(self) -> Path:
        return self.base / "plugins"

    @property
    def env(self) -> Path:
        return self.base / "env"

    @property
    def shown(self) -> Path:
        return self.base / "shown"

    def shown_at(self, target: str) -> Path:
        """Where the folder shown at ``target`` is staged. Example: ``/logs/verifier`` ->
        ``<base>/shown/logs/verifier``."""
        return self.shown / target.lstrip("/")

    @property
    def node_modules(self) -> Path:
        """Beside the workspace, so Node finds it from any workspace file by walking up (under docker
        ``/node_modules`` for the default ``/workspace``)."""
        return self.work.parent / "node_modules"

    def make(self, folders: Collection[str] = FOLDERS) -> None:
        """Make the workspace and the ``folders`` named beside it (all by default)."""
        self.work.mkdir(parents=True)
        self.make_folders(folders)

    def make_folders(self, folders: Collection[str]) -> None:
        for name in folders:
            (self.base / name).mkdir(exist_ok=True)


@dataclass(frozen=True)
class PathMap:
    """Folders commands see elsewhere than on the host (``bwrap`` with ``workdir`` or shown folders):
    (as seen inside, on the host) pairs, each path translated through the innermost that holds it.

    Example: ``PathMap((("/app", Path("/tmp/s/work")),)).to_host("/app/x.py")`` ->
    ``(Path("/tmp/s/work"), Path("/tmp/s/work/x.py"))``; ``.to_inside(Path("/tmp/s/work/x.py"))`` ->
    ``"/app/x.py"``.
    """

    pairs: tuple[tuple[str, Path], ...]

    def to_host(self, path: str) -> tuple[Path, Path] | None:
        """(the host folder an absolute inside ``path`` lies in, ``path`` on the host); None if none."""
        for seen, host in sorted(self.pairs, key=lambda pair: -len(pair[0])):
            if path == seen or path.startswith(seen.rstrip("/") + "/"):
                return host, host / path[len(seen) :].lstrip("/")
        return None

    def to_inside(self, host: Path) -> str:
        """How commands see the host path ``host`` (itself when no pair holds it)."""
        for seen, folder in sorted(self.pairs, key=lambda pair: -len(pair[1].parts)):
            if host.is_relative_to(folder):
                relative = host.relative_to(folder).as_posix()
                return seen if relative == "." else f"{seen.rstrip('/')}/{relative}"
        return str(host)


def interpreter_bin() -> Path:
    """The directory of the running interpreter, so ``python`` and ``pytest`` are the project's own.

    Example: under ``/work/.venv/bin/python`` -> ``Path("/work/.venv/bin")`` (symlinks not followed).
    """
    return Path(sys.executable).absolute().parent


def base_env(home: Path, tmp: Path, path: Sequence[str], extra: Mapping[str, str]) -> dict[str, str]:
    """The allowlisted environment: fixed PATH/HOME/XDG/TMPDIR, a few host locale variables, then
    ``extra`` (later wins).

    Example: ``base_env(Path("/s/home"), Path("/s/tmp"), ["/usr/bin"], {})["HOME"]`` -> ``"/s/home"``.
    """
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        PATH=":".join(dict.fromkeys(path)),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        TMPDIR=str(tmp),
        SHELL="/bin/bash",
    )
    return {**env, **extra}
