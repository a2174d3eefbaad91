"""Settings from the environment and ``./.env``, as the original coder_eval read them: the file fills
what the environment does not set, ``DEFAULT_*`` make the ``settings`` layer (over the task, under
the variant and the command line), ``RUNS_DIR`` moves the runs, a gateway backend is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from coder_eval.errors import InputError
from coder_eval.experiment import CommandLine
from coder_eval.experiment.checks import plan_warnings
from coder_eval.experiment.settings import EnvFile, load_env_file, runs_root, settings_layer
from coder_eval.trajectory import read_trajectory
from tests.experiment.builders import resolved, write_experiment
from tests.helpers import coder_eval, minimal_task

ENV = """\
# the team's settings
ANTHROPIC_API_KEY=sk-from-file
export DEFAULT_MAX_TURNS=7
DEFAULT_AGENT_MODEL="claude-haiku-4-5"   # a comment after a value
ENDPOINT=https://proxy.example
ANTHROPIC_BASE_URL=${ENDPOINT}/anthropic
EMPTY=
BARE_NAME
"""


def test_the_file_fills_what_the_environment_does_not_set(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(ENV)
    environ = {"ANTHROPIC_API_KEY": "sk-from-environment"}

    loaded = load_env_file(tmp_path / ".env", environ)

    assert loaded == EnvFile(
        tmp_path / ".env",
        ("DEFAULT_MAX_TURNS", "DEFAULT_AGENT_MODEL", "ENDPOINT", "ANTHROPIC_BASE_URL", "EMPTY"),
        ("ANTHROPIC_API_KEY",),
    )
    assert environ == {
        "ANTHROPIC_API_KEY": "sk-from-environment",  # the environment wins
        "DEFAULT_MAX_TURNS": "7",
        "DEFAULT_AGENT_MODEL": "claude-haiku-4-5",
        "ENDPOINT": "https://proxy.example",
        "ANTHROPIC_BASE_URL": "https://proxy.example/anthropic",
        "EMPTY": "",
    }


def test_no_file_sets_nothing(tmp_path: Path) -> None:
    environ: dict[str, str] = {}
    assert load_env_file(tmp_path / ".env", environ) == EnvFile(tmp_path / ".env") and environ == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A=1\nthis is not a setting\n", r"\.env:2: not a NAME=value line: 'this is not a setting'"),
        ("A='unclosed\n", r"\.env:1: not a NAME=value line"),
    ],
)
def test_a_line_that_is_not_a_setting_is_named_with_its_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / ".env").write_text(text)
    environ: dict[str, str] = {}
    with pytest.raises(InputError, match=message):
        load_env_file(tmp_path / ".env", environ)
    assert environ == {}  # nothing half-loaded


def test_a_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"A=\xff\xfe\n")
    with pytest.raises(InputError, match="cannot read the settings file"):
        load_env_file(tmp_path / ".env", {})


def test_the_defaults_make_the_settings_layer() -> None:
    environ = {"DEFAULT_AGENT_MODEL": "m", "DEFAULT_PERMISSION_MODE": "plan", "DEFAULT_MAX_TURNS": " 5 "}
    assert settings_layer(environ) == {
        "agent": {"model": "m", "permission_mode": "plan"},
        "run_limits": {"max_turns": 5},
    }
    assert settings_layer({"API_BACKEND": "direct"}) == {} and settings_layer({}) == {}


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"DEFAULT_MAX_TURNS": "many"}, "DEFAULT_MAX_TURNS='many': a whole number of turns"),
        ({"DEFAULT_MAX_TURNS": "0"}, "at least 1"),
        ({"API_BACKEND": "bedrock"}, "API_BACKEND=bedrock: coder_eval has no 'bedrock' backend"),
        ({"API_BACKEND": "proxy"}, "LLM gateway"),
    ],
)
def test_a_setting_coder_eval_cannot_honour_is_refused_by_name(environ: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        settings_layer(environ)


def test_runs_go_to_runs_dir() -> None:
    assert runs_root({}) == Path("runs") and runs_root({"RUNS_DIR": "/data/runs"}) == Path("/data/runs")


AB = """
experiment_id: ab
variants:
  - {variant_id: plain}
  - {variant_id: pinned, agent: {model: variant-model}, run_limits: {max_turns: 2}}
"""


def test_the_settings_layer_is_over_the_task_and_under_the_variant_and_command_line(tmp_path: Path) -> None:
    minimal_task(
        tmp_path / "tasks",
        "t",
        extra="agent: {kind: claude-code, model: task-model}\nrun_limits: {max_turns: 9}\n",
    )
    experiment = write_experiment(tmp_path, AB)
    settings = {"agent": {"model": "settings-model"}, "run_limits": {"max_turns": 7}}

    plans = resolved([tmp_path / "tasks"], experiment, CommandLine(settings=settings)).plans
    cli = resolved([tmp_path / "tasks"], experiment, CommandLine(model="cli-model", settings=settings)).plans

    plain, pinned = (next(p for p in plans if p.variant_id == v) for v in ("plain", "pinned"))
    assert (plain.task.agent.model, plain.task.run_limits.max_turns) == ("settings-model", 7)
    assert (
        plain.provenance["agent.model"] == "settings"
        and plain.provenance["run_limits.max_turns"] == "settings"
    )
    assert (pinned.task.agent.model, pinned.task.run_limits.max_turns) == ("variant-model", 2)
    assert {p.task.agent.model for p in cli} == {"cli-model"}


def test_a_default_for_a_field_an_agent_kind_lacks_is_left_out_quietly(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "t")  # the oracle: no permission_mode
    settings = {"agent": {"permission_mode": "plan"}}

    resolution = resolved([tmp_path / "tasks"], command_line=CommandLine(agent="oracle", settings=settings))

    assert not hasattr(resolution.plans[0].task.agent, "permission_mode")
    assert not [w for w in plan_warnings(resolution) if "permission_mode" in w]


def test_coder_eval_reads_the_env_file_of_the_folder_it_runs_in(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "t", extra="agent: {kind: oracle}\n")
    (tmp_path / ".env").write_text("DEFAULT_MAX_TURNS=7\nRUNS_DIR=elsewhere\nDEFAULT_AGENT_MODEL=from-file\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DEFAULT_MAX_TURNS", "RUNS_DIR", "DEFAULT_AGENT_MODEL")
    }

    result = coder_eval(
        "run", "tasks", "--no-report", "--no-index", cwd=tmp_path, env={**env, "DEFAULT_MAX_TURNS": "3"}
    )

    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "runs").exists()
    (trajectory,) = (tmp_path / "elsewhere" / "latest" / "episodes").glob("*.jsonl")
    start = read_trajectory(trajectory).start
    assert start is not None
    assert start.task["run_limits"]["max_turns"] == 3  # the environment over the file
    assert (start.agent["model"], start.provenance["agent.model"]) == ("from-file", "settings")
    assert json.loads((tmp_path / "elsewhere" / "latest" / "run.json").read_text())["status"] == "completed"


def test_a_bad_env_file_stops_every_command_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DEFAULT_MAX_TURNS=7\nnot a setting\n")

    result = coder_eval("plan", "tasks", cwd=tmp_path)

    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert ".env:2: not a NAME=value line: 'not a setting'" in result.stderr
