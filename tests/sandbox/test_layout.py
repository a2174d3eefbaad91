"""The folders a host sandbox makes: only those it uses, and the verifier's at its first command."""

from __future__ import annotations

from pathlib import Path

import pytest

import coder_eval.sandbox.tempdir as tempdir
from coder_eval.sandbox import Provision
from coder_eval.sandbox.cgroups import v1_controllers
from coder_eval.sandbox.layout import PathMap
from coder_eval.sandbox.spec import CliRecorder, Limits

from .builders import HOST_DRIVERS, run
from .conftest import MakeSandbox


def beside_workspace(base: Path) -> set[str]:
    return {p.name for p in base.iterdir() if p.is_dir()}


@pytest.mark.parametrize("driver", HOST_DRIVERS)
def test_an_agent_sandbox_makes_no_harness_folder_it_does_not_use(
    make_sandbox: MakeSandbox, driver: str
) -> None:
    sandbox = make_sandbox(driver)

    result = run(sandbox.exec("echo ok > ok.txt && echo $HOME"))

    assert beside_workspace(sandbox.layout.base) == {"work", "home", "tmp"}
    assert (result.exit_code, result.stdout) == (0, f"{sandbox.layout.home}\n")


@pytest.mark.parametrize("driver", HOST_DRIVERS)
def test_a_verifier_makes_home_its_toolchain_and_its_group_at_its_first_command(
    make_sandbox: MakeSandbox, driver: str
) -> None:
    sandbox = make_sandbox(driver, provision=Provision(role="verifier", trusted=True))
    run(sandbox.write_file("answer.txt", "42\n"))
    before = beside_workspace(sandbox.layout.base)
    assert sandbox.cgroup is None

    result = run(sandbox.exec("cat answer.txt && ls $HOME && python -c 'import sitecustomize'"))

    assert before == {"work"}
    assert beside_workspace(sandbox.layout.base) == {"work", "home", "tmp", "tools", "verdicts"}
    assert (result.exit_code, result.stdout) == (0, "42\n"), result.output
    assert (sandbox.layout.tools / "sitecustomize.py").is_file()


def test_each_folder_is_made_for_what_uses_it() -> None:
    recorder = CliRecorder(name="gh")

    assert Provision().folders == ("home", "tmp")
    assert Provision(recorders=(recorder,)).folders == ("home", "tmp", "bin", "run")
    assert Provision(network="model", model_port=8123).folders == ("home", "tmp", "run", "tools")
    assert Provision(role="verifier", trusted=True).folders == ("home", "tmp", "tools", "verdicts")


def test_a_control_group_joins_the_hierarchies_its_limits_use() -> None:
    unlimited = {"max_pids": None, "max_memory_mb": None}
    assert v1_controllers(Limits(**unlimited)) == ("freezer",)
    assert v1_controllers(Limits()) == ("pids", "memory", "freezer")  # the defaults
    assert v1_controllers(Limits(max_pids=16, max_memory_mb=64)) == ("pids", "memory", "freezer")
    assert v1_controllers(Limits(max_cpus=1.5, **unlimited)) == ("cpu", "freezer")


def test_processes_are_searched_for_only_after_a_command_started(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a control group, ``stop`` reads every process in /proc: not when nothing started."""
    searches: list[object] = []
    monkeypatch.setattr(tempdir.TempdirSandbox, "uses_cgroup", False)
    monkeypatch.setattr(tempdir, "kill_tree", lambda *args: searches.append(args))
    sandbox = make_sandbox()

    run(sandbox.stop())
    idle = len(searches)
    run(sandbox.exec("sleep 30 &"))
    run(sandbox.stop())
    run(sandbox.stop())

    assert (idle, len(searches)) == (0, 1)


def test_a_path_map_translates_through_the_innermost_folder_both_ways() -> None:
    paths = PathMap(
        (("/app", Path("/s/work")), ("/logs", Path("/s/shown/logs")), ("/logs/verifier", Path("/v")))
    )

    assert paths.to_host("/app") == (Path("/s/work"), Path("/s/work"))
    assert paths.to_host("/logs/verifier/reward.txt") == (Path("/v"), Path("/v/reward.txt"))
    assert paths.to_host("/logs/agent/x") == (Path("/s/shown/logs"), Path("/s/shown/logs/agent/x"))
    assert paths.to_host("/application/x") is None and paths.to_host("/etc/passwd") is None
    assert paths.to_inside(Path("/s/work/src/a.py")) == "/app/src/a.py"
    assert (
        paths.to_inside(Path("/s/shown/logs")) == "/logs"
        and paths.to_inside(Path("/v/r")) == "/logs/verifier/r"
    )
    assert paths.to_inside(Path("/s/home")) == "/s/home"


def test_sandboxes_leave_a_temporary_folder_too_deep_for_their_sockets_for_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from coder_eval.sandbox.layout import LONGEST_SOCKET_TAIL, SOCKET_PATH_MAX, sandbox_root

    deep = tmp_path / ("d" * max(1, SOCKET_PATH_MAX - LONGEST_SOCKET_TAIL - len(str(tmp_path))))
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    assert sandbox_root() == Path("/tmp")
    roomy = Path(tempfile.mkdtemp(prefix="ce-", dir="/tmp"))
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(roomy))
        assert sandbox_root() == roomy.resolve()
    finally:
        roomy.rmdir()


def test_an_episode_whose_temporary_folder_is_deep_still_records_its_cli_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recorded CLI talks to the harness over a Unix socket beside the workspace: under a deep
    ``$TMPDIR`` its path would pass the 107 bytes a socket path may have, and every episode would be
    ``invalid``."""
    import asyncio
    import tempfile

    from coder_eval.episode.plan import EpisodePlan
    from coder_eval.episode.runner import run_episode
    from coder_eval.task import load_tasks

    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    (tmp_path / "task.yaml").write_text(
        "task_id: deep\ninitial_prompt: deploy\n"
        "agent: {kind: command, command: 'deployctl deploy'}\n"
        "sandbox: {driver: tempdir, record_cli: [{tool: deployctl, exit_code: 0, stdout: ok}]}\n"
        "success_criteria: [{type: cli_called, tool: deployctl, verb: deploy}]\n",
        encoding="utf-8",
    )
    (task,) = load_tasks([tmp_path / "task.yaml"])

    end = asyncio.run(run_episode(EpisodePlan(task), "deep", tmp_path / "episode.jsonl"))

    assert (end.outcome, end.status) == ("pass", "completed"), end.error
    assert list(deep.iterdir()) == []
