"""sandbox.python and sandbox.node: built once per process, a private copy per sandbox."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.errors import SandboxError
from coder_eval.sandbox import Provision, envs
from coder_eval.sandbox.envs import PackageEnvs, sandbox_envs
from coder_eval.sandbox.spec import PackageEnv
from coder_eval.task import load_tasks
from tests.helpers import write_task
from tests.wheelhouse import wheelhouse

from .builders import run
from .conftest import MakeSandbox

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels of installed packages (pygments has a console script), installable without a registry."""
    folder = tmp_path_factory.mktemp("wheels")
    wheelhouse(["pygments"], folder)
    return folder


@pytest.fixture
def offline_pip(house: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(house))
    return house


def node_package(folder: Path, name: str) -> Path:
    """An npm package tarball with a module and a ``bin`` script, as ``npm pack`` would write it."""
    files = {
        "package/package.json": json.dumps(
            {"name": name, "version": "1.0.0", "main": "index.js", "bin": {f"{name}-hello": "cli.js"}}
        ),
        "package/index.js": "module.exports = { greet: () => 'hello from " + name + "' };\n",
        "package/cli.js": "#!/usr/bin/env node\nconsole.log(require('./index.js').greet());\n",
    }
    path = folder / f"{name}-1.0.0.tgz"
    with tarfile.open(path, "w:gz") as archive:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size, info.mode = len(data), 0o755
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("driver", ["tempdir", "bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_virtualenv_is_first_on_the_agents_path(
    driver: str, offline_pip: Path, make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    if driver == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    envs = PackageEnvs(tmp_path / "cache")
    template = run(envs.python(PackageEnv(env_packages=["pygments"])))

    sandbox = make_sandbox(driver, Provision(python_env=template))
    result = run(
        sandbox.exec(
            "command -v python; python -c 'import pygments, sys; print(sys.prefix)'; "
            "echo x=1 | pygmentize -l python -f terminal256 >/dev/null && echo script-ok"
        )
    )

    env = str(Path(sandbox.env["HOME"]).parent / "env")  # beside the workspace, as its commands see it
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{env}/bin/python", env, "script-ok"]
    assert sandbox.env["VIRTUAL_ENV"] == env


POISON = """
import pathlib, pygments
target = pathlib.Path(pygments.__file__)
try:
    target.write_text("raise SystemExit(7)")  # in place: through a hard link it would reach the cache
    print("written in place")
except PermissionError:
    target.unlink()
    target.write_text("raise SystemExit(7)")  # a new file, of the sandbox's own
    print("replaced")
"""


@pytest.mark.parametrize(("driver", "how"), [("tempdir", "written in place"), ("bwrap", "replaced")])
def test_each_sandbox_gets_its_own_tree(
    driver: str, how: str, offline_pip: Path, make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    if driver == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    envs = PackageEnvs(tmp_path / "cache")
    template = run(envs.python(PackageEnv(env_packages=["pygments"])))
    first = make_sandbox(driver, Provision(python_env=template))
    second = make_sandbox(driver, Provision(python_env=template))
    run(first.write_file("poison.py", POISON.encode()))

    poisoned = run(first.exec("python poison.py"))
    after = run(second.exec("python -c 'import pygments'"))

    assert poisoned.output.strip() == how or os.geteuid() != 0, poisoned.output
    assert run(first.exec("python -c 'import pygments'")).exit_code == 7  # it took, in its own tree
    assert after.exit_code == 0, after.output
    cached = next(template.glob("lib/python*/site-packages/pygments/__init__.py"))
    assert "SystemExit" not in cached.read_text()


def test_an_environment_is_built_once_per_package_set(offline_pip: Path, tmp_path: Path) -> None:
    envs = PackageEnvs(tmp_path / "cache")

    async def three() -> list[Path]:
        return list(
            await asyncio.gather(
                envs.python(PackageEnv(env_packages=["pygments"])),
                envs.python(PackageEnv(env_packages=["pygments"])),
                envs.python(PackageEnv(env_packages=[])),
            )
        )

    one, same, empty = run(three())

    assert one == same != empty
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == sorted(
        {one.parent.name, empty.parent.name}
    )
    assert not list(empty.glob("lib/python*/site-packages/pygments"))  # {} is an empty virtualenv


def test_a_failed_build_names_the_installers_error_and_is_not_retried(
    offline_pip: Path, tmp_path: Path
) -> None:
    envs = PackageEnvs(tmp_path / "cache")
    spec = PackageEnv(env_packages=["no-such-package-anywhere==9.9"])

    with pytest.raises(SandboxError, match="no-such-package-anywhere") as first:
        run(envs.python(spec))
    with pytest.raises(SandboxError) as second:
        run(envs.python(spec))

    assert "No matching distribution" in str(first.value) or "Could not find" in str(first.value)
    assert second.value is first.value


@pytest.mark.parametrize("driver", ["tempdir", "bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_node_packages_resolve_from_the_workspace(
    driver: str, make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    if shutil.which("npm") is None or (driver == "bwrap" and shutil.which("bwrap") is None):
        pytest.skip("needs npm (and bubblewrap)")
    package = node_package(tmp_path, "tinygreet")
    envs = PackageEnvs(tmp_path / "cache")
    template = run(envs.node(PackageEnv(env_packages=[str(package)])))

    sandbox = make_sandbox(driver, Provision(node_modules=template))
    run(sandbox.write_file("app.mjs", b"import t from 'tinygreet'; console.log(t.greet());\n"))
    result = run(
        sandbox.exec(
            "node -e \"console.log(require('tinygreet').greet())\" && node app.mjs && tinygreet-hello"
        )
    )

    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["hello from tinygreet"] * 3
    assert run(sandbox.glob("**/*")) == ["app.mjs"]  # the packages sit beside the workspace, not in it


TASK = """
task_id: uses-env
initial_prompt: Highlight it.
agent: {type: oracle}
reference_solution: "echo 'x = 1' | pygmentize -l python -f html > out.html"
sandbox:
  python: {env_packages: [pygments]}
success_criteria:
  - id: highlighted
    type: run_command
    command: python -c 'import pygments; print(open("out.html").read())'
    stdout_contains: [highlight]
"""


def test_an_episode_uses_the_environment_in_the_agent_and_the_verifier(
    offline_pip: Path, tmp_path: Path
) -> None:
    (task,) = load_tasks([write_task(tmp_path, TASK)])

    end = asyncio.run(run_episode(EpisodePlan(task), "r", tmp_path / "e.jsonl"))

    assert (end.outcome, end.status) == ("pass", "completed"), end.error


def test_no_environment_when_the_task_sets_none() -> None:
    assert run(sandbox_envs(None, None)) == (None, None)


def test_no_cache_folder_is_made_for_a_sandbox_without_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envs, "_ENVS", None)

    assert asyncio.run(sandbox_envs(None, None)) == (None, None)
    assert envs._ENVS is None  # a killed process would have left an empty coder_eval-envs-* folder
