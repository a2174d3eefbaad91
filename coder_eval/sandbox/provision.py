"""What a sandbox is made with, whatever the driver: the runner's request to a driver.

Example::

    agent_side = Provision(sources=task.sandbox.template_sources, recorders=task.sandbox.recorders,
                           path_dirs=("mock_bin",), network="model", model_port=8123)
    verifier = Provision(role="verifier", snapshot=Path("work.tar"), network="none", trusted=True,
                         mounts=(Mount(task_dir, "TASK_DIR"),))
    sandbox = await TempdirSandbox.create(spec, verifier)

The agent's sandbox is seeded from the task's templates, gets the recording shims and the mock
PATH directories; the verifier's is seeded from the agent's final workspace and gets the trusted
toolchain (``toolchain.py``) and the task's read-only folders. Folders a task's scripts expect at
fixed absolute paths (``/tests``, ``/logs``, ``/solution``: :class:`Shown`) are made by the
isolating drivers only, each where this sandbox's role allows. Drivers only carry this out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from coder_eval.sandbox.spec import CliRecorder, Limits, Network, SandboxSpecBase, TemplateSource
from coder_eval.sandbox.staged_plugins import StagedPlugin

Role = Literal["agent", "verifier", "judge"]
"""``agent``: where the agent runs; ``verifier``: where graders run; ``judge``: a judge's copy."""


@dataclass(frozen=True)
class Mount:
    """A trusted host folder shown read-only inside at its own path, that path in ``$<variable>``
    (``TASK_DIR`` ...) when it has one (the suite's other folders have none)."""

    source: Path
    variable: str | None = None


@dataclass(frozen=True)
class Shown:
    """A folder shown at the fixed absolute path ``target`` inside: a fresh, writable copy of
    ``source`` (a folder's contents, or a file by its name), or empty. Nothing in it is graded or
    carried from one sandbox to the next; ``bwrap`` and ``docker`` make it, ``tempdir`` cannot.

    Example: ``Shown("/tests", Path("task/tests"))`` (the verifier's), ``Shown("/logs/verifier")``.
    """

    target: str
    source: Path | None = None


@dataclass(frozen=True)
class Provision:
    """Everything a driver needs to make one sandbox (see the module docstring)."""

    role: Role = "agent"
    sources: tuple[TemplateSource, ...] = ()
    snapshot: Path | IO[bytes] | None = None
    """The workspace as a tar (a path, or a seekable file read from its start): the verifier's."""
    env: Mapping[str, str] = field(default_factory=dict)
    path_dirs: tuple[str, ...] = ()
    recorders: tuple[CliRecorder, ...] = ()
    network: Network = "none"
    model_port: int | None = None
    mounts: tuple[Mount, ...] = ()
    host_paths: tuple[Path, ...] = ()
    trusted: bool = False
    limits: Limits = field(default_factory=Limits)
    python_env: Path | None = None
    """A built virtualenv (``envs.py``) the sandbox gets a copy of, first on PATH."""
    node_modules: Path | None = None
    """A built ``node_modules`` the sandbox gets a copy of, beside the workspace."""
    read_only_workspace: bool = False
    hidden: tuple[Path, str] | None = None
    """Host folder of the hidden tests and their mount point in the workspace (verifier only)."""
    pytest_config: tuple[str, bytes] | None = None
    """The task's own pytest configuration file (name, content), as it was before the agent ran."""
    confcutdir: str | None = None
    """Workspace folder above which pytest loads no ``conftest.py`` (the hidden tests)."""
    plugins: tuple[StagedPlugin, ...] = ()
    """Host plugin and skills folders staged read-only beside the workspace (``plugins.py``)."""
    shown: tuple[Shown, ...] = ()
    """Folders at fixed absolute paths (scratch folders, the oracle's solution)."""

    @property
    def shown_folders(self) -> tuple[Shown, ...]:
        """``shown``, and the hidden tests when their mount point is an absolute path (``/tests``)."""
        hidden = self.hidden
        if hidden is not None and hidden[1].startswith("/"):
            return (*self.shown, Shown(hidden[1], hidden[0]))
        return self.shown

    @property
    def has_recorders(self) -> bool:
        return bool(self.recorders)

    @property
    def folders(self) -> tuple[str, ...]:
        """The layout's folders beside the workspace that this sandbox uses (``layout.py``): HOME and
        TMPDIR always, ``bin`` for recording shims, ``run`` for harness sockets, ``tools`` for the
        trusted toolchain or the model forwarder, ``verdicts`` for the verifier's reports, ``plugins``
        for staged plugins. Each is an
        inode to make and remove per sandbox, so one nobody uses is not made.

        Example: ``Provision(trusted=True).folders`` -> ``("home", "tmp", "tools", "verdicts")``.
        """
        forwarder = self.network == "model" and self.model_port is not None
        used = {
            "bin": self.has_recorders,
            "run": self.has_recorders or self.model_port is not None,
            "tools": self.trusted or forwarder,
            "verdicts": self.trusted,
            "plugins": bool(self.plugins),
        }
        return ("home", "tmp", *(name for name, wanted in used.items() if wanted))


def fixed_folders(spec: SandboxSpecBase, provision: Provision) -> tuple[Shown, ...]:
    """Every folder a sandbox shows at a fixed path: the provision's, then the spec's empty
    ``scratch_dirs`` (fresh in every sandbox, the agent's and the verifier's alike)."""
    return (*provision.shown_folders, *(Shown(folder) for folder in spec.scratch_dirs))


def fixed_paths_problem(driver: str, workdir: str | None, targets: Sequence[str]) -> str | None:
    """Why ``driver`` cannot show the workspace at ``workdir`` and folders at ``targets``; None if it can.

    Example: ``fixed_paths_problem("tempdir", "/app", ["/tests"])`` -> ``"the tempdir driver runs in
    a host folder and cannot show the workspace at /app, nor /tests, ..."``.
    """
    folders = [t for t in dict.fromkeys(targets) if t != workdir]
    if driver != "tempdir" or (workdir is None and not folders):
        return None
    shown = f"the workspace at {workdir}" + (", nor " if folders else "") if workdir else ""
    return (
        f"the tempdir driver runs in a host folder and cannot show {shown}{', '.join(folders)} where "
        "the task's scripts expect them (rewriting paths in files cannot be made complete): run it on "
        "bwrap or docker (--driver bwrap)"
    )
