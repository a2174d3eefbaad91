"""What every command of a sandbox sees in its environment, whatever the driver.

Example::

    env = sandbox_env(SandboxLayout(Path("/tmp/coder_eval-x1")), provision, mock_dirs=[], token="3f2a")
    env["PATH"]   # recorded CLIs, mock dirs, the sandbox's virtualenv, the harness's Python, /usr/bin ...
    env["HOME"]   # "/tmp/coder_eval-x1/home"

The layout is the sandbox's folders *as its commands see them*: the host paths for ``tempdir`` and
``bwrap``, the container paths for ``docker``. In the verifier, no workspace folder is on PATH and
Python and pytest start through the trusted toolchain (``toolchain.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from coder_eval.sandbox.envs import env_bin_dirs, site_packages
from coder_eval.sandbox.layout import SAFE_PATH, SandboxLayout, base_env, interpreter_bin
from coder_eval.sandbox.leftovers import MARKER_VARIABLE
from coder_eval.sandbox.provision import Provision
from coder_eval.sandbox.recording import SOCKET_VARIABLE
from coder_eval.sandbox.staged_plugins import PLUGINS_VARIABLE
from coder_eval.sandbox.toolchain import EMPTY_PYTEST_CONFIG, toolchain_env


def sandbox_env(
    layout: SandboxLayout,
    provision: Provision,
    mock_dirs: Sequence[str],
    token: str,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """The base environment of every command in the sandbox (docs/sandbox.md, Environment).

    ``extra`` (a driver's own variables) comes after the task's ``sandbox.env`` and before what the
    harness sets itself (the marker, the recorder's socket, the toolchain), which nothing overrides.
    """
    path = [str(layout.bin)] if provision.recorders else []
    path += mock_dirs
    path += env_bin_dirs(
        layout.env if provision.python_env else None,
        layout.node_modules if provision.node_modules else None,
    )
    path += [str(interpreter_bin()), *SAFE_PATH]
    fixed: dict[str, str] = {MARKER_VARIABLE: token}
    if provision.recorders:
        fixed[SOCKET_VARIABLE] = str(layout.run / "recorder.sock")
    if provision.python_env is not None:
        fixed["VIRTUAL_ENV"] = str(layout.env)
    fixed.update({mount.variable: str(mount.source) for mount in provision.mounts if mount.variable})
    if provision.plugins:
        fixed[PLUGINS_VARIABLE] = str(layout.plugins)
    if provision.trusted:
        path = [p for p in path if not Path(p).is_relative_to(layout.work)]
        fixed.update(_toolchain(layout, provision))
    return base_env(layout.home, layout.tmp, path, {**provision.env, **(extra or {}), **fixed})


def _toolchain(layout: SandboxLayout, provision: Provision) -> dict[str, str]:
    config = provision.pytest_config or EMPTY_PYTEST_CONFIG
    return toolchain_env(
        str(layout.tools),
        str(layout.verdicts),
        confcutdir=str(layout.work / provision.confcutdir) if provision.confcutdir else None,
        ini=str(layout.tools / "pytest-config" / config[0]),
        rootdir=str(layout.work),
        trusted=[
            *([str(layout.work / provision.hidden[1])] if provision.hidden else []),
            *(site_packages(layout.env) if provision.python_env else []),
        ],
    )
