"""The verifier's trusted toolchain: how Python and pytest start there, and how test verdicts come back.

Example::

    install_toolchain(layout.tools)                     # sitecustomize.py + the pytest plugin
    env = toolchain_env(tools_inside, verdicts_inside, confcutdir=".../hidden_tests")
    reports = read_reports(verdict_files)              # what pytest itself counted, per session

Graders run the agent's code, so the verifier starts Python and pytest in a way no workspace file can
bend:

- ``PYTHONSAFEPATH=1``: the working directory (the workspace) is never put *first* on ``sys.path``,
  so a ``pytest.py``, ``json.py`` or ``sitecustomize.py`` there cannot shadow the real one;
- a trusted ``sitecustomize`` (first on ``PYTHONPATH``, in a read-only harness folder) then appends
  the harness's own packages and *then* the script's folder or the working directory at the **end**
  of ``sys.path``, so the code under test still imports, after everything trusted;
- ``PYTHONNOUSERSITE=1``, no user site, no ``.pth`` from the workspace (it is not a site folder);
- ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``: a ``*.dist-info`` with a ``pytest11`` entry point in the
  workspace loads nothing; ``-p no:cacheprovider``; ``--import-mode=importlib``, so test files and
  ``conftest.py`` files are imported by path, never by a module name a workspace file could shadow;
  the hidden tests' folder is on ``sys.path`` before the workspace (helpers they import stay theirs);
- ``--confcutdir`` at the hidden tests, so a ``conftest.py`` the agent left above them is not loaded;
- pytest's configuration comes from the task's files as they were *before* the agent ran
  (``-c <copy> --rootdir <workspace>``; an empty one when the task had none), never from an ini
  file the agent wrote;
- the plugin ``coder_eval_pytest`` writes what pytest counted (collected, passed, failed, skipped ...)
  to a verdict folder outside the workspace, at the end of the session. A run that never finishes its
  session (``os._exit(0)`` in the code under test) leaves no verdict, and a fake binary printing
  ``4 passed`` is never consulted.

What this does not stop: code under test runs inside the test process, so code written to rewrite
pytest's own objects from the inside could still forge results (see docs/security.md).
"""

from __future__ import annotations

import sysconfig
from collections.abc import Sequence
from pathlib import Path

from coder_eval.sandbox.pytest_reports import PYTEST_PLUGIN

PLUGIN = "coder_eval_pytest"
VERDICTS_VARIABLE = "CODER_EVAL_VERDICTS"
"""Where the verdict plugin writes its reports (a folder of the verifier's, outside the workspace)."""
TRUSTED_INI = "pytest-trusted.ini"

SITECUSTOMIZE = r"""
import os, sys


def _append(path):
    if path and path not in sys.path:
        sys.path.append(path)


for _path in os.environ.get("CODER_EVAL_TRUSTED_PATH", "").split(os.pathsep):
    _append(_path)
_main = sys.argv[0] if sys.argv else ""
if _main and _main not in ("-c", "-m") and os.path.isfile(_main):
    _append(os.path.dirname(os.path.abspath(_main)))
_append(os.getcwd())
"""


def install_toolchain(folder: Path) -> None:
    """Write the trusted start-up files into ``folder`` (read-only to the sandbox's commands)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    (folder / f"{PLUGIN}.py").write_text(PYTEST_PLUGIN, encoding="utf-8")


def trusted_paths() -> list[str]:
    """The harness's own package folders (pytest lives there), appended before the workspace."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(p for p in (paths["purelib"], paths["platlib"]) if p))


def toolchain_env(
    tools: str,
    verdicts: str,
    *,
    confcutdir: str | None,
    ini: str | None,
    rootdir: str,
    trusted: Sequence[str] = (),
) -> dict[str, str]:
    """The environment variables that make every Python and pytest in the verifier trusted."""
    addopts = ["-p", PLUGIN, "-p", "no:cacheprovider", "--import-mode=importlib"]
    if ini is not None:
        addopts += ["-c", ini, "--rootdir", rootdir]
    if confcutdir is not None:
        addopts += ["--confcutdir", confcutdir]
    return {
        "PYTHONPATH": tools,
        "PYTHONSAFEPATH": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "CODER_EVAL_TRUSTED_PATH": ":".join([*trusted_paths(), *trusted]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_ADDOPTS": " ".join(addopts),
        VERDICTS_VARIABLE: verdicts,
    }


EMPTY_PYTEST_CONFIG = ("pytest.ini", b"[pytest]\n")
"""Used when the task had no pytest configuration: the workspace's own files are never read."""
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""Files pytest reads its configuration from, in its own order of preference."""


def pytest_config(files: dict[str, bytes]) -> tuple[str, bytes] | None:
    """The pytest configuration among the workspace-root ``files`` as pytest would pick it.

    Example: ``pytest_config({"pyproject.toml": b"[tool.pytest.ini_options]\\n..."})``
    -> ``("pyproject.toml", b"...")``; ``None`` when none of them configures pytest.
    """
    markers = {
        "pytest.ini": b"",
        ".pytest.ini": b"",
        "pyproject.toml": b"[tool.pytest.ini_options]",
        "tox.ini": b"[pytest]",
        "setup.cfg": b"[tool:pytest]",
    }
    for name in PYTEST_CONFIGS:
        data = files.get(name)
        if data is not None and markers[name] in data:
            return name, data
    return None
