"""Sandboxes made of a host folder (``tempdir``, ``bwrap``): the verbs, seeding and clean-up they share.

Example::

    sandbox = await TempdirSandbox.create(spec, Provision(sources=spec.template_sources))
    await sandbox.exec("make test", timeout=60)
    await sandbox.close()

A driver subclass says how a command is started (:meth:`HostSandbox.command`) and how everything it
started is stopped (:meth:`HostSandbox.stop`). Paths inside are the host paths of the layout
(``layout.py``), so ``workdir`` is the host path of ``<base>/work``; except in a driver that shows
folders at fixed paths (``bwrap``): there the workspace is seen at the task's ``workdir`` (``/app``)
and each shown folder at its target (``/tests``), and the verbs translate those paths to the host's.
"""

from __future__ import annotations

import asyncio
import signal
import stat
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, ClassVar, Self

from coder_eval.errors import SandboxError
from coder_eval.sandbox.base import (
    ExecResult,
    WorkspaceFileError,
    file_glob,
    glob_regex,
    literal_prefix,
    resolved,
    split_glob,
)
from coder_eval.sandbox.cgroups import BASH, Cgroup, rlimits
from coder_eval.sandbox.environment import sandbox_env
from coder_eval.sandbox.envs import clone_env
from coder_eval.sandbox.layout import PathMap, SandboxLayout, sandbox_root
from coder_eval.sandbox.leftovers import group_name, register
from coder_eval.sandbox.process import kill_group, run_in_group
from coder_eval.sandbox.provision import Provision, fixed_folders, fixed_paths_problem
from coder_eval.sandbox.relay import relayed
from coder_eval.sandbox.seed import (
    install_recorders,
    install_tools,
    make_executable,
    seed_workspace,
    stage_shown,
)
from coder_eval.sandbox.snapshot import Bounds, Dropped, write_tar
from coder_eval.sandbox.spec import SandboxSpecBase
from coder_eval.sandbox.staged_plugins import stage_plugins
from coder_eval.sandbox.trees import remove_tree, walk


class HostSandbox:
    """The shared part of host-folder drivers; subclasses set ``driver`` and how commands start."""

    driver: ClassVar[str] = "tempdir"
    uses_cgroup: ClassVar[bool] = True
    confined: ClassVar[bool] = False
    """Commands run without capabilities, as a user that owns none of the harness's files (so a
    protected package cache can be shared by hard links, ``envs.py``)."""
    shows_fixed_paths: ClassVar[bool] = False
    """Commands see the workspace at the task's ``workdir`` and shown folders at their targets."""
    cgroup: Cgroup | None = None

    def __init__(self, layout: SandboxLayout, spec: SandboxSpecBase, provision: Provision) -> None:
        self.layout = layout
        self.spec = spec
        self.provision = provision
        self.fixed = fixed_folders(spec, provision) if self.shows_fixed_paths else ()
        workdir = spec.workdir if self.shows_fixed_paths else None
        self.inside = SandboxLayout(layout.base, workspace=Path(workdir)) if workdir else layout
        """The layout as commands see it (the host's, but for a workspace shown at ``workdir``)."""
        self.workdir = str(self.inside.work)
        shown = [(f.target, layout.shown_at(f.target)) for f in self.fixed]
        self.paths = PathMap(((self.workdir, layout.work), *shown))
        self.env: dict[str, str] = {}
        self.token = uuid.uuid4().hex
        self.dropped: list[Dropped] = []
        self._groups: set[int] = set()
        self._closed = False
        self._unswept = False
        """A command may have started since processes were last swept (``stop``)."""
        self._prepared = False
        """HOME, TMPDIR and the toolchain exist (``deferred``)."""

    @classmethod
    async def create(
        cls, spec: SandboxSpecBase, provision: Provision, *, base_dir: Path | None = None
    ) -> Self:
        """Make and seed a fresh sandbox; ``SandboxError`` when it cannot be made here."""
        await cls.check_available()
        cls.check_fixed_paths(spec, provision)
        try:
            where = base_dir or sandbox_root()
            base = Path(tempfile.mkdtemp(prefix="coder_eval-", dir=where)).resolve()
        except OSError as exc:
            raise SandboxError(f"cannot make a sandbox directory under {where}: {exc}") from exc
        sandbox = cls(SandboxLayout(base), spec, provision)
        try:
            await asyncio.to_thread(sandbox._make)
        except BaseException:
            await sandbox.close()
            raise
        return sandbox

    @classmethod
    async def check_available(cls) -> None:
        """Raise ``SandboxError`` when this driver cannot run here (a plain folder always can)."""

    @classmethod
    def check_fixed_paths(cls, spec: SandboxSpecBase, provision: Provision) -> None:
        """Raise ``SandboxError`` when the task needs folders at fixed paths this driver cannot show."""
        targets = [f.target for f in fixed_folders(spec, provision)]
        problem = None if cls.shows_fixed_paths else fixed_paths_problem(cls.driver, spec.workdir, targets)
        if problem is not None:
            raise SandboxError(problem)

    # -- making it -------------------------------------------------------------------------------

    def _make(self) -> None:
        """Seed the folder and make the control group (one trip to a worker thread for both)."""
        self._populate()
        if self.uses_cgroup and not self.deferred:
            self.cgroup = Cgroup.make(group_name(self.token), self.provision.limits)

    def _populate(self) -> None:
        layout, provision = self.layout, self.provision
        try:
            layout.make(() if self.deferred else provision.folders)
            register(layout.base, self.token)
            self.dropped, mock_dirs = seed_workspace(layout.work, provision)
            stage_shown(self.fixed, layout.shown_at)
            stage_plugins(layout.plugins, provision.plugins)
            install_recorders(layout.bin, provision.recorders, str(self.host_socket("recorder")), layout.work)
            if not self.deferred:
                install_tools(layout.tools, provision)
                self._prepared = True
            if provision.python_env is not None:
                clone_env(provision.python_env, layout.env, link=self.confined)
            if provision.node_modules is not None:
                clone_env(provision.node_modules, layout.node_modules, link=self.confined)
        except OSError as exc:
            raise SandboxError(f"cannot seed the sandbox at {layout.base}: {exc}") from exc
        mocks = [self.paths.to_inside(d) for d in mock_dirs]
        self.env = sandbox_env(self.inside, provision, mocks, self.token)

    @property
    def deferred(self) -> bool:
        """The verifier makes what only commands need (HOME, TMPDIR, its toolchain, its control
        group) at its first command: many graders only read files, and each folder costs an inode."""
        return self.provision.role == "verifier"

    def _prepare_commands(self) -> None:
        """Make what commands need, once (at creation, or at a deferred sandbox's first command)."""
        if self._prepared:
            return
        try:
            self.layout.make_folders(self.provision.folders)
            install_tools(self.layout.tools, self.provision)
        except OSError as exc:
            raise SandboxError(f"cannot prepare the sandbox at {self.layout.base}: {exc}") from exc
        if self.uses_cgroup and self.cgroup is None:
            self.cgroup = Cgroup.make(group_name(self.token), self.provision.limits)
        self._prepared = True

    def host_socket(self, name: str) -> Path:
        """Host path of a harness socket that commands inside reach at the same path."""
        return self.layout.run / f"{name}.sock"

    # -- the verbs -------------------------------------------------------------------------------

    async def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        """Run ``cmd`` (a string through ``/bin/bash -c``, or an argv) in ``cwd`` (default: the workspace).

        Example: ``await sandbox.exec("make test", timeout=60, cwd="app")`` -> ``ExecResult(...)``.
        On timeout the whole process group gets SIGTERM, then SIGKILL 0.5 s later, and the result
        has ``timed_out=True`` and ``exit_code=124``. A program that is not found gives 127.
        """
        if self._closed:
            raise SandboxError(f"the sandbox at {self.layout.base} is closed; cannot run {cmd!r}")
        workdir = self._host_path(cwd or ".")
        if not workdir.is_dir():
            raise SandboxError(f"cwd {cwd!r} is not a directory in the sandbox ({workdir})")
        argv = [BASH, "-c", cmd] if isinstance(cmd, str) else list(cmd)
        if not self._prepared:
            await asyncio.to_thread(self._prepare_commands)
        return await run_in_group(
            self.command(argv, cwd=self.paths.to_inside(workdir)),
            cwd=workdir,
            env={**self.env, **(env or {})},
            timeout=timeout if timeout is not None else self.provision.limits.timeout,
            stdin=stdin,
            on_start=self._groups.add,
        )

    async def read_file(self, path: str, *, limit: int | None = None) -> bytes:
        target = self._host_path(path)
        if not target.is_file():
            raise WorkspaceFileError(f"{path!r} is not a file in the sandbox")
        try:
            with target.open("rb") as handle:
                return handle.read() if limit is None else handle.read(limit)
        except OSError as exc:
            raise WorkspaceFileError(f"cannot read {path!r}: {exc.strerror}") from exc

    async def write_file(self, path: str, data: bytes | str, *, executable: bool = False) -> None:
        target = self._host_path(path, must_exist=False)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink():
                target.unlink()
            target.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
            if executable:
                make_executable(target)
        except OSError as exc:
            raise SandboxError(f"cannot write {path!r} in the sandbox: {exc}") from exc

    async def glob(self, pattern: str, *, include_links: bool = False) -> list[str]:
        return await asyncio.to_thread(self._glob, pattern, include_links)

    def _glob(self, pattern: str, include_links: bool) -> list[str]:
        if Path(pattern).is_absolute():
            folder, rest = split_glob(pattern)
            root = self._host_path(folder)
            return [f"{folder.rstrip('/')}/{found}" for found in _matches(root, rest, include_links)]
        return _matches(self.layout.work.resolve(), pattern, include_links)

    async def snapshot(self, out: IO[bytes], *, ignore: Sequence[str] = ()) -> None:
        bounds = Bounds.of(self.provision.limits)
        await asyncio.to_thread(write_tar, self.layout.work, out, ignore=ignore, bounds=bounds)

    def command(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        """The host argv that runs ``argv`` in ``cwd`` inside this sandbox: confined by the driver,
        under the limits, and in the sandbox's control group when there is one."""
        self._prepare_commands()
        self._unswept = True
        if self.cgroup is not None:  # the shell that joins the group sets the rlimits too
            return self.cgroup.enter(self.confine(argv, cwd=cwd), self.provision.limits)
        return self.confine([*rlimits(self.provision.limits), *argv], cwd=cwd)

    def confine(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        """How the driver confines a command (a plain folder does not)."""
        return list(argv)

    def oom_killed(self) -> bool:
        """True when the memory limit killed one of the sandbox's processes (known with a cgroup)."""
        return self.cgroup is not None and self.cgroup.oom_killed()

    def limits_hit(self) -> list[str]:
        """The limits the sandbox's processes ran into (``memory``, ``processes``; known with a cgroup)."""
        return self.cgroup.limits_hit() if self.cgroup is not None else []

    def wrap(
        self, argv: Sequence[str], *, cwd: str | None = None, env_names: Sequence[str] = ()
    ) -> list[str]:
        """For an agent's long-lived CLI: the argv that starts it the way ``exec`` starts commands, its
        streams relayed so that its tools cannot write into them (``relay.py``)."""
        return relayed(self.command(argv, cwd=cwd or self.workdir))

    async def stop(self) -> None:
        """Kill the process groups of every command started here and, with a control group, every
        process in it (drivers add what else they can)."""
        groups, self._groups = set(self._groups), set()
        for group in groups:
            kill_group(group, signal.SIGKILL)
        if self.cgroup is not None and self.cgroup.pids():  # an empty group needs no worker thread
            await asyncio.to_thread(self.cgroup.kill)

    async def close(self) -> None:
        """Kill what commands left running, then remove the folder (idempotent).

        ``SandboxError`` when it cannot be removed (the caller reports the leftover).
        """
        self._closed = True
        await self.stop()
        cgroup, self.cgroup = self.cgroup, None
        await asyncio.to_thread(_remove, self.layout.base, cgroup)

    # -- paths -----------------------------------------------------------------------------------

    def _host_path(self, path: str, *, must_exist: bool = True) -> Path:
        """The host path of ``path`` (workspace-relative, or absolute inside the sandbox), kept inside
        the folder it names (the workspace, a shown folder, or the sandbox's own)."""
        root, candidate = self._root_of(path)
        target = resolved(candidate) if must_exist else resolved(candidate.parent) / candidate.name
        if not target.is_relative_to(root.resolve()):
            raise WorkspaceFileError(f"{path!r} resolves outside the sandbox ({target})")
        return target

    def _root_of(self, path: str) -> tuple[Path, Path]:
        """(the host folder ``path`` must stay in, ``path`` on the host, unresolved)."""
        if not Path(path).is_absolute():
            return self.layout.work, self.layout.work / path
        return self.paths.to_host(path) or (self.layout.base, self.layout.base / path)


def _matches(root: Path, pattern: str, include_links: bool) -> list[str]:
    """Paths relative to ``root`` of the files (and, if asked, links) matching ``pattern``: the folder
    its literal steps name, walked without recursion (as deep as the pattern reaches), its entries
    matched as the docker helper and the snapshot view match them (``base.glob_regex``)."""
    files = file_glob(pattern)
    if not files or ".." in files.split("/"):
        return []
    folder, rest = literal_prefix(files)
    try:
        start = resolved(root / folder)
    except WorkspaceFileError:
        return []
    if not start.is_relative_to(root) or not start.is_dir():
        return []
    regex, levels = glob_regex(rest), None if "**" in rest else rest.count("/") + 1
    found = []
    for parent, dirnames, filenames in walk(start):
        relative = Path(parent).relative_to(start).as_posix()
        prefix = "" if relative == "." else relative + "/"
        for name in (*dirnames, *filenames):
            if regex.fullmatch(prefix + name) and _listed(Path(parent) / name, include_links):
                found.append(f"{folder}/{prefix}{name}" if folder else prefix + name)
        if levels is not None and prefix.count("/") + 1 >= levels:
            dirnames[:] = []  # the pattern reaches no deeper
    return sorted(found)


def _listed(path: Path, include_links: bool) -> bool:
    """A regular file, or a link when links are asked for."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or (include_links and stat.S_ISLNK(mode))


def _remove(base: Path, cgroup: Cgroup | None) -> None:
    """The control group, then the folder (one trip to a worker thread for both)."""
    if cgroup is not None:
        cgroup.remove()
    remove_tree(base)
