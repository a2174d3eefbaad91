"""``docker``: each sandbox is a container from a local image, every verb goes through the engine.

Example::

    sandbox = await DockerSandbox.create(DockerSpec(limits=Limits(max_memory_mb=512)), Provision())
    await sandbox.exec("python -c 'print(1)'")       # docker exec, in /workspace
    await sandbox.read_file("out.txt")                # docker exec of the helper, never a host path
    await sandbox.close()                             # docker rm: nothing is left

The workspace (``sandbox.workdir`` or ``sandbox.docker.working_dir``, default ``/workspace``), HOME,
TMPDIR, the verdicts and the folders shown at fixed paths (``/tests``, ``scratch_dirs``: fresh
copies, ``provision.py``) live in the container; it is seeded by ``docker cp`` of a host folder
prepared as for the host drivers (``seed.py``), and a snapshot is ``docker cp`` of the workspace back
out. Read-only binds
bring in only what the harness owns: its Python (so recorded CLIs, the model forwarder, the verifier's
pytest and the agents' CLIs run inside), the agents' ``node_modules``, ``/coder_eval/tools``, the
recorded CLIs' clients (``/coder_eval/bin``) and the harness's Unix sockets (``/coder_eval/run``), and
for graders ``$TASK_DIR`` and ``$REFERENCE_DIR``. The image therefore needs a C library the harness's
Python runs with (the default image is made from this machine's own packages: ``base_image.py``).
Isolation, limits and network: ``container.py``; the images: ``images.py``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, ClassVar, Self

from coder_eval.errors import SandboxError, WorkspaceFileError
from coder_eval.sandbox.base import ExecResult, file_glob, glob_regex, split_glob
from coder_eval.sandbox.bwrap import interpreter_folders
from coder_eval.sandbox.cgroups import container_forks_refused
from coder_eval.sandbox.docker.container import Bind, EmptyFolder, create_args
from coder_eval.sandbox.docker.engine import Call, cli, client_env, copy_out, docker, engine_problem, must
from coder_eval.sandbox.docker.helper import HELPER, MARKER, PREFIX, REFUSED, helper_argv, helper_result
from coder_eval.sandbox.docker.images import image_for
from coder_eval.sandbox.docker.spec import DockerSpec
from coder_eval.sandbox.environment import sandbox_env
from coder_eval.sandbox.envs import clone_env
from coder_eval.sandbox.layout import SandboxLayout, interpreter_bin, sandbox_root
from coder_eval.sandbox.leftovers import register
from coder_eval.sandbox.network import forwarder_argv
from coder_eval.sandbox.process import MAX_OUTPUT_BYTES, run_in_group
from coder_eval.sandbox.provision import Provision, fixed_folders
from coder_eval.sandbox.seed import install_recorders, install_tools, seed_workspace, stage_shown
from coder_eval.sandbox.snapshot import Bounds, Dropped, WorkspaceTooLarge, measured
from coder_eval.sandbox.spec import overlap
from coder_eval.sandbox.staged_plugins import stage_plugins
from coder_eval.sandbox.trees import remove_tree

INSIDE = Path("/coder_eval")
"""The sandbox's own folders in the container (HOME, TMPDIR, tools, sockets ...)."""
NOTE_ROOM = 256
"""Room past the helper's cap for its note and its timeout line."""
STOP_MARGIN_S = 10.0
"""How long past a command's own timeout the harness waits for the helper to report it."""


class DockerSandbox:
    """One container (see the module docstring)."""

    driver: ClassVar[str] = "docker"

    def __init__(self, base: Path, spec: DockerSpec, provision: Provision) -> None:
        self.host = SandboxLayout(base)
        self.inside = SandboxLayout(INSIDE, workspace=Path(spec.working_dir))
        self.spec, self.provision = spec, provision
        self.fixed = fixed_folders(spec, provision)
        self.workdir = str(self.inside.work)
        self.env: dict[str, str] = {}
        self.token = uuid.uuid4().hex
        self.name = f"coder_eval-{self.token[:16]}"
        self.dropped: list[Dropped] = []
        self.python = str(interpreter_bin() / "python")
        self._created = self._running = self._oom = self._closed = self._pids_refused = False
        self._runs: set[str] = set()
        self._measured: WorkspaceTooLarge | None = None

    @classmethod
    async def create(cls, spec: DockerSpec, provision: Provision, *, base_dir: Path | None = None) -> Self:
        """A fresh, seeded, running container; ``SandboxError`` when it cannot be made here."""
        await cls.check_available()
        cls.check_fixed_paths(spec, provision)
        options = spec.docker
        image = await image_for(
            image=options.image,
            dockerfile=Path(options.dockerfile_path) if options.dockerfile_path else None,
            args=options.build.args,
            extra_args=options.build.extra_args,
            exclude=options.build.exclude,
        )
        sandbox = cls(
            Path(tempfile.mkdtemp(prefix="coder_eval-", dir=base_dir or sandbox_root())).resolve(),
            spec,
            provision,
        )
        try:
            await asyncio.to_thread(sandbox._stage)
            await sandbox._make(image)
        except BaseException:
            await sandbox.close()
            raise
        return sandbox

    @classmethod
    async def check_available(cls) -> None:
        """Raise ``SandboxError`` when no docker engine answers here."""
        problem = await engine_problem()
        if problem is not None:
            raise SandboxError(f"sandbox driver 'docker' is unavailable: {problem}")

    @classmethod
    def check_fixed_paths(cls, spec: DockerSpec, provision: Provision) -> None:
        """``SandboxError`` when a folder shown at a fixed path covers the workspace or a harness bind."""
        binds = [*interpreter_folders(), *provision.host_paths, *(m.source for m in provision.mounts)]
        for folder in fixed_folders(spec, provision):
            taken = next((str(b) for b in binds if overlap(folder.target, str(b))), None)
            if overlap(folder.target, spec.working_dir):
                taken = f"the workspace {spec.working_dir}"
            if taken is not None:
                raise SandboxError(
                    f"sandbox driver 'docker': {folder.target} overlaps {taken}; use another folder"
                )

    # -- making it -------------------------------------------------------------------------------

    def _staged(self, inside: Path) -> Path:
        """Where a container path is prepared on the host before ``docker cp``."""
        return self.host.base / "root" / inside.relative_to("/")

    def _stage(self) -> None:
        host, inside, provision = self.host, self.inside, self.provision
        try:
            for folder in (host.bin, host.run, host.tools):
                folder.mkdir()
            work = self._staged(inside.work)
            for folder in (
                work,
                self._staged(inside.home),
                self._staged(inside.tmp),
                self._staged(inside.verdicts),
            ):
                folder.mkdir(parents=True)
            register(host.base, self.token, container=self.name)
            self.dropped, mock_dirs = seed_workspace(work, provision)
            stage_shown(self.fixed, lambda target: self._staged(Path(target)))
            (host.tools / "shown").write_text("".join(f"{f.target}\n" for f in self.fixed), encoding="utf-8")
            stage_plugins(host.plugins, provision.plugins)
            install_recorders(host.bin, provision.recorders, str(inside.run / "recorder.sock"), work)
            install_tools(host.tools, provision)
            (host.tools / "helper.py").write_text(HELPER, encoding="utf-8")
            if provision.python_env is not None:
                clone_env(provision.python_env, self._staged(inside.env), seen_as=inside.env)
            if provision.node_modules is not None:
                clone_env(
                    provision.node_modules, self._staged(inside.node_modules), seen_as=inside.node_modules
                )
        except OSError as exc:
            raise SandboxError(f"cannot prepare the sandbox at {host.base}: {exc}") from exc
        mocks = [str(inside.work / d.relative_to(work)) for d in mock_dirs]
        self.env = sandbox_env(inside, provision, mocks, self.token, extra=self.spec.docker.passed_through())

    def _binds(self) -> list[Bind | EmptyFolder]:
        host, inside, provision = self.host, self.inside, self.provision
        binds: list[Bind | EmptyFolder] = [
            Bind(host.tools, str(inside.tools)),
            Bind(host.bin, str(inside.bin)),
            Bind(host.run, str(inside.run)),
            *([Bind(host.plugins, str(inside.plugins))] if provision.plugins else []),
        ]
        shared = [*interpreter_folders(), *provision.host_paths, *(m.source for m in provision.mounts)]
        binds += [Bind(path, str(path)) for path in dict.fromkeys(shared)]
        binds += [Bind(Path(m.source), m.target, m.read_only) for m in self.spec.docker.mounts()]
        if provision.read_only_workspace:
            binds.append(Bind(self._staged(inside.work), str(inside.work)))
        elif provision.snapshot is not None:  # the workspace is exactly the snapshot, not the image's
            binds.append(EmptyFolder(str(inside.work)))
        return binds

    async def _make(self, image: str) -> None:
        init = self._helper_argv("init")
        args = create_args(self.name, image, self.provision, token=self.token, binds=self._binds(), init=init)
        await must(*args)
        self._created = True
        await self._start()
        if self.provision.read_only_workspace:
            await must("cp", f"{self._staged(INSIDE)}/.", f"{self.name}:{INSIDE}")
            return
        await must("cp", f"{self.host.base / 'root'}/.", f"{self.name}:/")
        await asyncio.to_thread(remove_tree, self.host.base / "root")

    async def _start(self) -> None:
        await must("start", self.name)
        self._running = True

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
        """Run ``cmd`` (a ``bash -c`` string or an argv) in the container, in ``cwd`` (default: the
        workspace). On timeout, or when it ends, everything it started is killed; a timeout gives
        ``timed_out=True`` and exit code 124, a program that is not found 127."""
        await self._ready(cmd)
        argv = ["/bin/bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        limit = timeout if timeout is not None else self.provision.limits.timeout
        run_id = uuid.uuid4().hex
        variables = {**self.env, **(env or {}), MARKER: run_id}
        end = f"all:{','.join(self._runs)}" if self.provision.role == "verifier" else "own"
        helper = self._helper_argv("run", self.workdir, cwd or ".", str(limit), "capture", end, "--", *argv)
        command = [*cli(), *self._exec_flags(variables, stdin is not None), self.name, *helper]
        self._runs.add(run_id)
        try:
            result = await run_in_group(
                command,
                cwd=self.host.base,
                env={**client_env(), **_by_value(variables, keep=False)},
                timeout=limit + STOP_MARGIN_S,
                stdin=stdin,
                max_output=MAX_OUTPUT_BYTES + NOTE_ROOM,  # the helper cut it already, noting the total
            )
        except BaseException:
            await asyncio.shield(self._kill_run(run_id))
            raise
        finally:
            self._runs.discard(run_id)
        if result.timed_out:
            await self._kill_run(run_id)
        return helper_result(result, cmd)

    async def read_file(self, path: str, *, limit: int | None = None) -> bytes:
        done = await self._helper("read", self.workdir, path, str(-1 if limit is None else limit))
        return done.out

    async def write_file(self, path: str, data: bytes | str, *, executable: bool = False) -> None:
        payload = data.encode("utf-8") if isinstance(data, str) else data
        await self._helper("write", self.workdir, path, "1" if executable else "0", stdin=payload)

    async def glob(self, pattern: str, *, include_links: bool = False) -> list[str]:
        root, rest = split_glob(pattern) if pattern.startswith("/") else (self.workdir, pattern)
        regex = glob_regex(file_glob(rest)).pattern
        done = await self._helper("glob", self.workdir, root, regex, "1" if include_links else "0")
        found = [str(item) for item in json.loads(done.out)]
        return [f"{root.rstrip('/')}/{item}" for item in found] if pattern.startswith("/") else found

    async def snapshot(self, out: IO[bytes], *, ignore: Sequence[str] = ()) -> None:
        """``docker cp`` of the workspace, bounded: measured in the container first (here, or in
        ``stop`` while it still ran), then counted again as it streams."""
        if self._closed:
            raise SandboxError(f"the sandbox {self.name} is closed; cannot snapshot it")
        measured = await self._measure() if self._running else self._measured
        if measured is not None:
            raise measured
        bounds = Bounds.of(self.provision.limits)
        await asyncio.to_thread(copy_out, self.name, self.workdir, out, list(ignore), bounds)

    async def _measure(self) -> WorkspaceTooLarge | None:
        """The workspace past its bounds, measured by the helper (apparent sizes, entries), or None
        (also when the helper cannot run: the stream is counted anyway)."""
        bounds = Bounds.of(self.provision.limits)
        given = (bounds.max_bytes, bounds.max_entries, bounds.max_depth, bounds.max_path_bytes)
        limits = [-1 if bound is None else bound for bound in given]
        try:
            done = await self._helper("measure", self.workdir, *map(str, limits))
        except SandboxError:
            return None
        return measured(json.loads(done.out), bounds)

    def wrap(
        self, argv: Sequence[str], *, cwd: str | None = None, env_names: Sequence[str] = ()
    ) -> list[str]:
        """The host argv that runs an agent's CLI in the container (``docker exec -i``), with the
        variables ``env_names`` taken from the starting process; with ``network: model`` under the
        in-container forwarder; its streams relayed by the non-dumpable helper through sockets (its
        tools cannot write into them: ``coder_eval/sandbox/relay.py``). When the CLI ends, everything
        it started is killed."""
        if not self._running and not self._closed:
            subprocess.run([*cli(), "start", self.name], capture_output=True, env=client_env(), check=False)
            self._running = True
        port = self.provision.model_port
        if self.provision.network == "model" and port is not None:
            script, socket = str(self.inside.tools / "forward.py"), str(self.inside.run / "model.sock")
            argv = forwarder_argv(self.python, script, port, socket, argv)
        names = [name for name in dict.fromkeys(env_names) if name not in ("PWD", MARKER)]
        flags = ["exec", "-i", "-e", f"{MARKER}={uuid.uuid4().hex}", *(a for n in names for a in ("-e", n))]
        helper = self._helper_argv("run", self.workdir, cwd or ".", "0", "relay", "own", "--", *argv)
        config = [f"{name}={value}" for name, value in client_env().items() if name != "PATH"]
        return ["/usr/bin/env", *config, *cli(), *flags, self.name, *helper]

    async def stop(self) -> None:
        """Stop the container: its PID namespace ends, and every process in it with it. The next verb
        starts it again (the workspace is kept)."""
        if not self._running:
            return
        if self.provision.limits.max_pids is not None:
            self._pids_refused = self._pids_refused or await self._forks_refused()
        self._measured = await self._measure()  # while it runs: a stopped container runs no helper
        await must("stop", "--time", "0", self.name)
        self._running = False
        state = await docker("inspect", "--format", "{{.State.OOMKilled}}", self.name)
        self._oom = self._oom or state.out.strip() == b"true"

    def oom_killed(self) -> bool:
        """True when the memory limit killed a process in the container (known once it was stopped)."""
        return self._oom

    def limits_hit(self) -> list[str]:
        """``memory`` when a process was killed at the memory limit, ``processes`` when a fork was
        refused at the pids limit (read from the container's control group before it stops)."""
        return [name for name, hit in (("memory", self._oom), ("processes", self._pids_refused)) if hit]

    async def _forks_refused(self) -> bool:
        """The container's ``pids.events``, read on the host through its first process's control
        group (a local engine; with a remote one nothing is known)."""
        state = await docker("inspect", "--format", "{{.State.Pid}}", self.name)
        pid = state.out.strip().decode() if state.code == 0 else ""
        return pid.isdigit() and await asyncio.to_thread(container_forks_refused, int(pid))

    def host_socket(self, name: str) -> Path:
        """Host path of a harness socket that commands inside reach at ``/coder_eval/run/<name>.sock``."""
        return self.host.run / f"{name}.sock"

    async def close(self) -> None:
        """Remove the container and the host folder (idempotent); ``SandboxError`` when the container
        cannot be removed (the caller reports the leftover; a later run removes it)."""
        self._closed = True
        problem = None
        if self._created:
            done = await docker("rm", "--force", "--volumes", self.name)
            if done.code != 0 and "No such container" not in done.err:
                problem = done.err
            self._created = self._running = False
        await asyncio.to_thread(remove_tree, self.host.base)
        if problem:
            raise SandboxError(f"cannot remove the container {self.name}: {problem}")

    # -- talking to the container ----------------------------------------------------------------

    async def _ready(self, what: object) -> None:
        if self._closed:
            raise SandboxError(f"the sandbox {self.name} is closed; cannot run {what!r}")
        if not self._running:
            await self._start()

    def _helper_argv(self, *args: str) -> list[str]:
        return helper_argv(self.python, str(self.inside.tools), *args)

    def _exec_flags(self, variables: Mapping[str, str], stdin: bool) -> list[str]:
        """``docker exec`` options: the variables by name (their values travel in the client's
        environment, out of sight of ``ps``), except the client's own ``DOCKER_*`` ones by value."""
        named = [arg for name in _by_value(variables, keep=False) for arg in ("-e", name)]
        valued = [arg for item in _by_value(variables, keep=True).items() for arg in ("-e", "=".join(item))]
        return ["exec", *(["-i"] if stdin else []), *named, *valued]

    async def _helper(self, *args: str, stdin: bytes | None = None) -> Call:
        """One helper operation; a refused request is a ``WorkspaceFileError`` (the agent shaped it)."""
        await self._ready(args[0])
        flags = ["exec", "-i"] if stdin is not None else ["exec"]
        done = await docker(*flags, self.name, *self._helper_argv(*args), stdin=stdin)
        if done.code == REFUSED and done.err.startswith(PREFIX):
            raise WorkspaceFileError(done.err.removeprefix(PREFIX))
        if done.code != 0:
            raise SandboxError(f"{args[0]} in the sandbox {self.name} failed: {done.err or done.code}")
        return done

    async def _kill_run(self, run_id: str) -> None:
        if self._running:
            await docker("exec", self.name, *self._helper_argv("kill", run_id))


def _by_value(variables: Mapping[str, str], *, keep: bool) -> dict[str, str]:
    """The variables passed by value (``keep``: the docker client's own names) or by name."""
    return {k: v for k, v in variables.items() if k.startswith("DOCKER_") == keep}
