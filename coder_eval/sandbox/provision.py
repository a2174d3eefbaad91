"""What a sandbox is made with, whatever the driver: the runner's request to a driver.

Example::

    agent_side = Provision(sources=task.sandbox.template_sources, recorders=task.sandbox.recorders,
                           path_dirs=("mock_bin",), network="model", model_port=8123)
    verifier = Provision(role="verifier", snapshot=Path("work.tar"), network="none", trusted=True,
                         mounts=(Mount(task_dir, "TASK_DIR"),))
    sandbox = await TempdirSandbox.create(spec, verifier)

The agent's sandbox is seeded from the task's templates, gets the recording shims and the mock
PATH directories; the verifier's is seeded from the agent's final workspace and gets the trusted
toolchain (``toolchain.py``) and the task's read-only folders. Drivers only carry this out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from coder_eval.sandbox.spec import CliRecorder, Limits, Network, TemplateSource
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
