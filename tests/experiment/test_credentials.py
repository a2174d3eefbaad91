"""Model keys a plan needs that the host does not have: agents, judges, simulated users, agent.env."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coder_eval.experiment.credentials import missing_keys
from tests.experiment.builders import resolved
from tests.helpers import coder_eval, write_task

TASK = """
task_id: t
initial_prompt: Do it.
agent: {agent}
success_criteria:
  - {{type: file_exists, path: x}}
"""


def warnings(tmp_path: Path, agent: str, host: dict[str, str], extra: str = "") -> list[str]:
    path = write_task(tmp_path, TASK.format(agent=agent) + extra)
    return missing_keys(resolved([path]), host)


@pytest.mark.parametrize(
    ("agent", "key"),
    [
        ("{kind: claude-code, model: claude-sonnet-4-6}", "ANTHROPIC_API_KEY"),
        ("{kind: claude-code}", "ANTHROPIC_API_KEY"),  # the CLI's default model is a real one
        ("{kind: codex, model: gpt-5.1-codex}", "OPENAI_API_KEY"),
        ("{kind: gemini, model: gemini-2.5-pro}", "GEMINI_API_KEY, GOOGLE_API_KEY"),
        ("{kind: opencode, model: anthropic/claude-sonnet-4-5}", "ANTHROPIC_API_KEY"),
        ("{kind: opencode, model: openai/gpt-5}", "OPENAI_API_KEY"),
    ],
)
def test_a_real_model_without_its_key_is_named(tmp_path: Path, agent: str, key: str) -> None:
    (found,) = warnings(tmp_path, agent, {})
    assert found.startswith(f"{key} is not set" if "," not in key else f"none of {key} is set")
    assert "in 1 episode(s) (variant default); those episodes would be invalid" in found


@pytest.mark.parametrize(
    "agent",
    [
        "{kind: oracle}",
        "{kind: none}",
        "{kind: command, command: my-agent}",
        "{kind: claude-code, model: scripted}",
        "{kind: codex, model: scripted}",
        "{kind: claude-code, model: claude-sonnet-4-6, env: {CLAUDE_CODE_OAUTH_TOKEN: t}}",
        "{kind: claude-code, model: claude-sonnet-4-6, claude_settings: {apiKeyHelper: get-key}}",
    ],
)
def test_what_needs_no_key_is_not_warned_about(tmp_path: Path, agent: str) -> None:
    assert warnings(tmp_path, agent, {}) == []


def test_a_set_key_silences_the_warning(tmp_path: Path) -> None:
    assert (
        warnings(tmp_path, "{kind: claude-code, model: claude-sonnet-4-6}", {"ANTHROPIC_API_KEY": "k"}) == []
    )
    assert warnings(tmp_path, "{kind: codex}", {"ANTHROPIC_API_KEY": "k"}) != []  # the wrong key


def test_judges_simulated_users_and_agent_env_need_their_own(tmp_path: Path) -> None:
    extra = """
  - {id: quality, type: llm_judge, rubric: "Is it good?", model: claude-sonnet-4-6}
  - {id: review, type: agent_judge, rubric: "Is it good?", model: claude-sonnet-4-6}
simulation: {goal: get help, model: claude-sonnet-4-6}
"""
    agent = "{kind: claude-code, model: scripted, env: {GH_TOKEN: {from_env: MY_GH_TOKEN}}}"
    found = warnings(tmp_path, agent, {"ANTHROPIC_AUTH_TOKEN": "t"}, extra=extra)
    assert [w.split(": ")[0] for w in found] == ["MY_GH_TOKEN is not set", "ANTHROPIC_API_KEY is not set"]
    assert "agent.env.GH_TOKEN of the claude-code agent cannot be set" in found[0]
    assert "criterion review (agent_judge, model claude-sonnet-4-6)" in found[1]
    assert len(warnings(tmp_path, agent, {}, extra=extra)) == 4  # + the llm judge and the simulated user


def test_plan_and_run_warn_before_anything_runs(tmp_path: Path) -> None:
    extra = "  - {id: quality, type: llm_judge, rubric: 'Is it good?', model: claude-sonnet-4-6}\n"
    write_task(tmp_path / "tasks", TASK.format(agent="{kind: none}") + extra)
    env = {name: value for name, value in os.environ.items() if not name.startswith("ANTHROPIC")}
    expected = "none of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN is set: criterion quality (llm_judge"
    plan = coder_eval("plan", "tasks", cwd=tmp_path, env=env)
    assert plan.returncode == 0 and expected in plan.stderr.replace("\n", " ")
    run = coder_eval("run", "tasks", "--no-report", cwd=tmp_path, env=env)
    assert expected in run.stderr.replace("\n", " ")
    assert run.returncode == 5  # the judge could not be asked: nothing was measured
