"""``bwrap``: every command in bubblewrap namespaces, with a minimal read-only view of the host.

Example::

    sandbox = await BwrapSandbox.create(BwrapSpec(network="none"), Provision())
    await sandbox.exec("touch ok")              # exit 0: the workspace is writable
    await sandbox.exec("touch /usr/nope")       # exit 1: the system folders are read-only
    await sandbox.exec("cat /root/secret")      # exit 1: the host's homes are not there at all

Each command runs in a new user namespace with every capability dropped (also when coder_eval runs
as root), its own PID, IPC, UTS and (unless ``network: host``) network namespaces, a new session,
and dies with its parent; nested user namespaces are refused. The filesystem it sees:

- read-only: ``/usr`` (and the ``/bin``, ``/lib`` ... links to it), a short list of ``/etc`` files,
  the Python running coder_eval (so the agent's CLI and the verifier's tools start), and the task's
  read-only folders (``$TASK_DIR`` and, for graders, ``$REFERENCE_DIR``);
- its own ``/proc`` (only the sandbox's processes; kernel settings read-only), ``/dev`` and ``/tmp``;
- read-write: the workspace, HOME and TMPDIR of this sandbox only; with ``sandbox.workdir`` the
  workspace is seen at that path (``/app``), and the folders this sandbox shows at fixed paths
  (``scratch_dirs``, the verifier's ``/tests``, the oracle's ``/solution``) at theirs, each a fresh
  copy (``provision.py``).

The host's ``/root`` and ``/home``, the project checkout, the run directory and every other sandbox
are not visible. When the PID namespace's first process ends, the kernel kills every other process in
it, so nothing a command started outlives it. Limits (``sandbox.limits``) go through a control group
where one can be made (memory, processes, CPUs) and rlimits otherwise (address space, file size, CPU
seconds, processes for non-root users).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import shutil
import stat
import sys
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from coder_eval.errors import SandboxError
from coder_eval.sandbox.base import ExecResult
from coder_eval.sandbox.layout import SAFE_PATH, SandboxLayout, sandbox_root
from coder_eval.sandbox.leftovers import OWNER_FILE, STAGED_ETC_PREFIX, owner
from coder_eval.sandbox.local import HostSandbox
from coder_eval.sandbox.network import forwarder_argv
from coder_eval.sandbox.process import run_in_group
from coder_eval.sandbox.provision import Provision, Shown, fixed_folders
from coder_eval.sandbox.relay import relayed
from coder_eval.sandbox.spec import SandboxSpecBase, overlap
from coder_eval.sandbox.trees import remove_tree

ETC_FILES = (
    "passwd", "group", "hosts", "resolv.conf", "nsswitch.conf", "host.conf", "gai.conf", "protocols",
    "services", "ssl", "ca-certificates", "ca-certificates.conf", "alternatives", "ld.so.cache",
    "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "mime.types", "os-release", "debian_version",
    "python3", "bash.bashrc", "inputrc", "profile", "gitconfig", "magic", "magic.mime", "mtab",
)  # fmt: skip
"""The ``/etc`` entries a sandbox sees (when the host has them); nothing else of ``/etc``."""
TOP_LINKS = ("bin", "sbin", "lib", "lib64", "lib32", "libx32")
"""Top-level folders that are links into ``/usr`` on merged-/usr systems (else bound read-only)."""

_problems: dict[str, str | None] = {}


class BwrapSpec(SandboxSpecBase):
    """``driver: bwrap``."""

    driver: Literal["bwrap"] = "bwrap"


def system_mounts() -> list[str]:
    """The read-only system part of the sandbox's root: ``/usr`` and its top-level links, ``/etc``,
    the interpreter's folders, each worked out once per process: every command reuses them."""
    interpreter = [a for folder in interpreter_folders() for a in ("--ro-bind", str(folder), str(folder))]
    return [*_usr_mounts(), *etc_mounts(), *interpreter]


@functools.cache
def _usr_mounts() -> tuple[str, ...]:
    """``/usr`` with the top-level folders (links into it, or folders bound read-only), as the host
    has them when first asked."""
    system = ["--ro-bind", "/usr", "/usr"]
    for name in TOP_LINKS:
        path = Path("/") / name
        if path.is_symlink():
            system += ["--symlink", str(path.readlink()), str(path)]
        elif path.is_dir():
            system += ["--ro-bind", str(path), str(path)]
    return tuple(system)


def etc_mounts() -> list[str]:
    """``/etc`` as a sandbox sees it: the entries of :data:`ETC_FILES` the host has, copied into one
    folder bound whole (``staged_etc``); every entry bound on its own where no copy can be staged. One
    mount instead of some thirty: each costs a command about 0.15 ms. Worked out once per process:
    every command reuses it."""
    global _etc_mounts
    if _etc_mounts is None or _etc_mounts[0] != os.getpid():
        staged = staged_etc()
        if staged is not None:
            args = ["--ro-bind", str(staged), "/etc"]
        else:
            entries = [Path("/etc") / name for name in ETC_FILES if (Path("/etc") / name).exists()]
            args = [a for path in entries for a in ("--ro-bind", str(path), str(path))]
        _etc_mounts = (os.getpid(), args)
    return _etc_mounts[1]


_etc_mounts: tuple[int, list[str]] | None = None


SHOWN_ROOTS = (Path("/usr"), Path("/proc"))
"""Where a sandbox sees the host's own files (or its own ``/proc``): a link into them is kept a link."""

_staged: tuple[int, Path] | None = None


def staged_etc() -> Path | None:
    """This process's copy of the ``/etc`` entries a sandbox sees, made on first use (None when it
    cannot be made), as the host has them then (``_stage``: folders with what they hold).

    It sits in a ``coder_eval-etc-*`` folder beside the sandboxes, with the owner record a sandbox
    has, so a harness that dies without removing it (it does so at exit) leaves it to the next run's
    reaper. A forked child makes its own."""
    global _staged
    if _staged is not None and _staged[0] == os.getpid():
        return _staged[1]
    try:
        base = Path(tempfile.mkdtemp(prefix=STAGED_ETC_PREFIX, dir=sandbox_root()))
    except OSError:
        return None
    try:
        (base / OWNER_FILE).write_text(json.dumps({**owner(uuid.uuid4().hex), "base": str(base)}))
        etc = base / "etc"
        etc.mkdir(mode=0o755)
        for name in ETC_FILES:
            if (Path("/etc") / name).exists():
                _stage(Path("/etc") / name, etc / name)
    except OSError:
        remove_tree(base)
        return None
    atexit.register(_remove_staged, os.getpid(), base)
    _staged = (os.getpid(), etc)
    return etc


def _stage(source: Path, target: Path, within: frozenset[Path] = frozenset()) -> None:
    """``source`` copied to ``target``: a link into ``/usr`` or ``/proc`` (which a sandbox sees), or
    one that leads nowhere, stays a link; a folder is made again with what it holds; a file is
    copied as its content (as a bind of a link to it would show it); anything else is left out. An
    entry other users of the host may not read is staged empty, with its mode (``/etc/ssl/private``):
    a sandbox sees what any user may read, whoever runs coder_eval. ``OSError`` on a folder that
    holds itself through a link (the caller then binds the entries instead)."""
    if source.is_symlink() and (
        not source.exists() or any(source.resolve().is_relative_to(r) for r in SHOWN_ROOTS)
    ):
        target.symlink_to(source.readlink())
        return
    mode = stat.S_IMODE(source.stat().st_mode)
    if source.is_dir():
        folder = source.resolve()
        if folder in within:
            raise OSError(f"{source} holds itself through a link")
        target.mkdir()
        if mode & stat.S_IROTH and mode & stat.S_IXOTH:
            for entry in sorted(source.iterdir()):
                _stage(entry, target / entry.name, within | {folder})
        target.chmod(mode)
    elif source.is_file():
        if mode & stat.S_IROTH:
            shutil.copy2(source, target)
        else:
            target.touch(mode=0o600)
            target.chmod(mode)


def _remove_staged(pid: int, base: Path) -> None:
    if os.getpid() == pid:  # a forked child's exit leaves its parent's copy alone
        with contextlib.suppress(SandboxError):
            remove_tree(base)


def interpreter_folders() -> list[Path]:
    """The running Python's installation and virtualenv, when they are not under ``/usr`` (worked
    out once per interpreter: every command asks)."""
    return list(_interpreter_folders(sys.base_prefix, sys.prefix, sys.executable))


@functools.cache
def _interpreter_folders(base_prefix: str, prefix: str, executable: str) -> tuple[Path, ...]:
    folders = {Path(p).resolve() for p in (base_prefix, prefix)}
    folders.add(Path(executable).resolve().parent)
    usr = Path("/usr")
    return tuple(
        sorted(  # one inside another is shown with it (a bind brings what is mounted under it)
            f
            for f in folders
            if not f.is_relative_to(usr) and not any(f != o and f.is_relative_to(o) for o in folders)
        )
    )


def system_program(program: str) -> bool:
    """``program`` is an absolute path to an executable file under ``/usr`` (through the ``/bin``
    links too), so a sandbox has it.

    Example: ``system_program("/bin/bash")`` -> ``True``; ``system_program("pytest")`` -> ``False``.
    """
    path = Path(program)
    if not path.is_absolute():
        return False
    resolved = path.resolve()
    return resolved.is_relative_to("/usr") and resolved.is_file() and os.access(resolved, os.X_OK)


def namespace_flags(network: str) -> list[str]:
    flags = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if network != "host":
        flags.append("--unshare-net")
    return [
        *flags,
        *("--cap-drop", "ALL", "--new-session", "--die-with-parent", "--disable-userns"),
        *("--hostname", "coder-eval"),
    ]


def bwrap_argv(
    bwrap: str,
    layout: SandboxLayout,
    provision: Provision,
    *,
    cwd: str,
    inside: SandboxLayout | None = None,
    shown: Sequence[Shown] = (),
) -> list[str]:
    """The ``bwrap`` command line for one command of the sandbox at ``layout`` (without the command);
    ``inside`` is where commands see the workspace when it is not at its host path, ``shown`` the
    folders shown at fixed paths."""
    inside = inside or layout
    work = "--ro-bind" if provision.read_only_workspace else "--bind"
    own = [
        *(work, str(layout.work), str(inside.work)),
        *("--bind", str(layout.home), str(layout.home)),
        *("--bind", str(layout.tmp), str(layout.tmp)),
    ]
    optional = [  # the harness's folders a sandbox was made with (``Provision.harness_folders``)
        ("--ro-bind", layout.bin),
        ("--ro-bind", layout.run),
        ("--ro-bind", layout.tools),
        ("--bind", layout.verdicts),
        ("--ro-bind", layout.plugins),
        ("--bind", layout.env),
    ]
    for how, folder in optional:
        if folder.exists():
            own += [how, str(folder), str(folder)]
    if layout.node_modules.exists():  # beside the workspace, wherever commands see it
        own += ["--bind", str(layout.node_modules), str(inside.node_modules)]
    for target in outermost_targets(shown):
        own += ["--bind", str(layout.shown_at(target)), target]
    shared = [str(p) for p in (*provision.host_paths, *(m.source for m in provision.mounts))]
    proc = [
        "--proc",
        "/proc",
        *(["--ro-bind", "/proc/sys", "/proc/sys"] if Path("/proc/sys").is_dir() else []),
    ]
    return [  # the fresh /tmp comes first: what is bound later (a virtualenv under /tmp) stays visible
        bwrap,
        *namespace_flags(provision.network),
        *("--tmpfs", "/tmp", "--dev", "/dev"),
        *proc,
        *system_mounts(),
        *(arg for path in shared for arg in ("--ro-bind", path, path)),
        *own,
        *("--chdir", cwd),
    ]


def outermost_targets(shown: Sequence[Shown]) -> list[str]:
    """The shown folders' targets without those inside another (staged inside it already)."""
    targets = sorted({folder.target for folder in shown}, key=len)
    kept: list[str] = []
    for target in targets:
        if not any(overlap(target, k) for k in kept):
            kept.append(target)
    return kept


def unshowable(targets: Sequence[str], host_folders: Sequence[Path]) -> str | None:
    """Why bubblewrap cannot show folders at ``targets``: one that is, holds or lies in a folder it
    shows from the host (the system's, the interpreter's, the harness's), or ``/tmp`` itself.

    Example: ``unshowable(["/usr/src/app"], [])`` -> ``"/usr/src/app overlaps /usr, which the bwrap
    driver shows from the host read-only; ..."``.
    """
    bound = ["/usr", "/etc", "/tmp", *(f"/{name}" for name in TOP_LINKS), *map(str, host_folders)]
    for target in targets:
        for folder in bound:
            if folder == "/tmp" and target.startswith("/tmp/"):
                continue  # a fresh tmpfs: a folder in it can be shown
            if overlap(target, folder):
                return (
                    f"{target} overlaps {folder}, which the bwrap driver shows from the host read-only; "
                    "use another folder, or the docker driver"
                )
    return None


async def bwrap_problem() -> str | None:
    """Why bubblewrap cannot run here, or ``None`` when it can (probed once per process).

    Example: ``await bwrap_problem()`` -> ``"bwrap is not installed; install it with ..."``
    """
    path = shutil.which("bwrap")
    if path is None:
        return "bwrap is not installed; install it with 'apt-get install bubblewrap' or use driver 'tempdir'"
    if path not in _problems:
        with tempfile.TemporaryDirectory(prefix="coder_eval-probe-") as scratch:
            layout = SandboxLayout(Path(scratch))
            layout.make()
            probe = [*bwrap_argv(path, layout, Provision(), cwd=str(layout.work)), "--", "/bin/true"]
            result = await run_in_group(probe, cwd=Path("/"), env={"PATH": ":".join(SAFE_PATH)}, timeout=30)
        _problems[path] = None if result.exit_code == 0 else _probe_failure(result)
    return _problems[path]


def _probe_failure(result: ExecResult) -> str:
    why = result.output.strip() or f"exit code {result.exit_code}"
    return (
        f"bwrap cannot set up its namespaces and mounts here ({why}); it needs unprivileged user "
        "namespaces; use driver 'tempdir' instead"
    )


class BwrapSandbox(HostSandbox):
    """A host-folder sandbox whose every command runs in ``bwrap`` (see the module docstring)."""

    driver = "bwrap"
    confined = True
    shows_fixed_paths = True

    @classmethod
    async def check_available(cls) -> None:
        """Raise ``SandboxError`` when bubblewrap is missing or cannot make namespaces here."""
        problem = await bwrap_problem()
        if problem is not None:
            raise SandboxError(f"sandbox driver 'bwrap' is unavailable: {problem}")

    @classmethod
    def check_fixed_paths(cls, spec: SandboxSpecBase, provision: Provision) -> None:
        """``SandboxError`` when a folder the task shows at a fixed path would cover one bwrap binds."""
        targets = [
            *([spec.workdir] if spec.workdir else []),
            *(f.target for f in fixed_folders(spec, provision)),
        ]
        hosts = [*interpreter_folders(), *provision.host_paths, *(m.source for m in provision.mounts)]
        problem = unshowable(targets, hosts)
        if problem is not None:
            raise SandboxError(f"sandbox driver 'bwrap': {problem}")

    def confine(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        """``bwrap <namespaces> <mounts> --chdir <cwd> -- env -- <argv>`` (``env`` reports a program that
        is not found as 127, like a shell; bwrap itself would exit 1), without ``env`` when the program
        is one of the host's own under ``/usr`` (``/bin/bash`` for every command given as a string),
        which a sandbox sees as the host has it (an exec fewer: about 0.8 ms a command). With
        ``network: model`` every command runs under the in-sandbox forwarder, so whatever the agent
        starts (its CLI, a ``command`` agent's script) reaches the model endpoint, and nothing else;
        the forwarder is the harness's own interpreter, which every sandbox is shown, so it needs no
        ``env`` either (the forwarder reports a program it cannot start as 127 itself)."""
        port, forwarded = self.provision.model_port, False
        if self.provision.network == "model" and port is not None:
            script = str(self.layout.tools / "forward.py")
            python = str(Path(sys.executable).absolute())
            argv = forwarder_argv(python, script, port, str(self.host_socket("model")), argv)
            forwarded = True
        bwrap = shutil.which("bwrap") or "bwrap"
        line = bwrap_argv(bwrap, self.layout, self.provision, cwd=cwd, inside=self.inside, shown=self.fixed)
        found = [] if forwarded or system_program(argv[0]) else ["/usr/bin/env", "--"]
        return [*line, "--", *found, *argv]

    def wrap(
        self, argv: Sequence[str], *, cwd: str | None = None, env_names: Sequence[str] = ()
    ) -> list[str]:
        """The agent's CLI in the sandbox (under the forwarder with ``network: model``, as every command),
        its streams relayed from the host (``relay.py``): nothing in the sandbox holds a pipe of them."""
        return relayed(self.command(argv, cwd=cwd or self.workdir))

    async def stop(self) -> None:
        """Kill every bwrap started here; the kernel then kills everything in its PID namespace. With a
        control group, every process in it is killed as well."""
        await super().stop()
