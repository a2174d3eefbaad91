"""Typed agent specs: each kind owns its fields, both spellings load alike, secrets stay out of records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from coder_eval import agents
from coder_eval.agents import AgentSpecBase, FromEnv, LocalPlugin, resolve_env
from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.agents.opencode.spec import OpenCodeSpec
from coder_eval.errors import AgentError, TaskError
from coder_eval.task import load_tasks
from tests.helpers import coder_eval, minimal_task, write_task


def only(path: Path) -> object:
    (task,) = load_tasks([path])
    return task.agent  # type: ignore[attr-defined]


def load_error(path: Path) -> str:
    with pytest.raises(TaskError) as caught:
        load_tasks([path])
    return str(caught.value)


def test_type_and_kind_are_one_field_with_the_original_defaults(tmp_path: Path) -> None:
    original = only(minimal_task(tmp_path, "a", extra="agent: {type: claude-code}\n"))
    ours = only(minimal_task(tmp_path, "b", extra="agent: {kind: claude-code}\n"))
    omitted = only(minimal_task(tmp_path, "c"))

    assert original == ours == omitted
    assert isinstance(original, ClaudeCodeSpec)
    assert (original.permission_mode, original.setting_sources) == ("acceptEdits", ["project"])


def test_each_kind_owns_its_fields_and_a_foreign_one_names_its_owners(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="agent: {type: opencode, setting_sources: []}\n")

    message = load_error(path)

    assert f"{path}:" in message and "agent.setting_sources: unknown field" in message
    assert "agent.setting_sources is a field of the claude-code agent(s), not of 'opencode'" in message


def test_unknown_kind_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    message = load_error(minimal_task(tmp_path, extra="agent: {type: claude-cod}\n"))

    assert "unknown agent kind 'claude-cod' (did you mean 'claude-code'?)" in message


def test_plugins_as_paths_or_objects_with_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("site", "other"):
        (tmp_path / ".plugins" / name).mkdir(parents=True)
    monkeypatch.setenv("PLUGIN_HOME", ".plugins")
    spelled = (
        "agent: {type: claude-code, plugins: [{type: local, path: $PLUGIN_HOME/site}, .plugins/other]}\n"
    )

    agent = only(minimal_task(tmp_path, extra=spelled))

    folders = [str((tmp_path / ".plugins" / name).resolve()) for name in ("site", "other")]
    assert agent.plugins == [LocalPlugin(path=folder) for folder in folders]


def test_system_prompt_file_and_claude_settings_file_are_read_at_load(tmp_path: Path) -> None:
    (tmp_path / "extra.md").write_text("Always run the tests.\n")
    (tmp_path / "settings.json").write_text(json.dumps({"env": {"X": "1"}}))
    extra = (
        "agent: {type: claude-code, system_prompt: Be brief., system_prompt_file: extra.md,"
        " claude_settings: settings.json}\n"
    )

    agent = only(minimal_task(tmp_path, extra=extra))

    assert agent.instructions() == "Be brief.\n\nAlways run the tests.\n"
    assert agent.claude_settings == {"env": {"X": "1"}}


def test_missing_agent_files_are_errors_with_the_line(tmp_path: Path) -> None:
    extra = "agent:\n  type: claude-code\n  system_prompt_file: nope.md\n  claude_settings: nope.json\n"

    message = load_error(minimal_task(tmp_path, extra=extra))

    assert (
        "agent.system_prompt_file: cannot read" in message and "agent.claude_settings: cannot read" in message
    )


def test_sdk_options_pass_through_but_never_the_harness_own(tmp_path: Path) -> None:
    assert ClaudeCodeSpec(sdk_options={"max_thinking_tokens": 500}).sdk_options == {
        "max_thinking_tokens": 500
    }
    with pytest.raises(ValueError, match=r"\['cwd'\] are set by coder_eval itself"):
        ClaudeCodeSpec(sdk_options={"cwd": "/"})
    with pytest.raises(ValueError, match="are not claude-agent-sdk options"):
        ClaudeCodeSpec(sdk_options={"max_thinkin_tokens": 500})


def test_opencode_owns_its_original_fields() -> None:
    spec = OpenCodeSpec(variant="high", pure=False, require_token_telemetry=True)

    assert (spec.variant, spec.pure, spec.require_token_telemetry) == ("high", False, True)


class PluginSpec(AgentSpecBase):
    type: str = "my-agent"
    temperature: float = 0.0


class PluginAgent:
    Spec = PluginSpec


def test_entry_point_agents_bring_their_own_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("coder_eval_test_plugin")
    module.PluginAgent = PluginAgent  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "coder_eval_test_plugin", module)
    monkeypatch.setattr(agents, "plugin_agents", lambda: {"my-agent": "coder_eval_test_plugin:PluginAgent"})

    agent = only(minimal_task(tmp_path, "ok", extra="agent: {type: my-agent, temperature: 0.5}\n"))
    message = load_error(minimal_task(tmp_path / "bad", "bad", extra="agent: {type: my-agent, top_p: 1}\n"))

    assert isinstance(agent, PluginSpec) and agent.temperature == 0.5
    assert "agent kind 'my-agent': top_p: unknown field; its fields: model, temperature" in message


def test_from_env_resolves_only_when_the_agent_starts() -> None:
    env = {"PLAIN": "1", "KEY": FromEnv(from_env="SECRET_KEY")}

    assert resolve_env(env, {"SECRET_KEY": "s3cret"}) == {"PLAIN": "1", "KEY": "s3cret"}
    with pytest.raises(AgentError, match=r"agent\.env\.KEY: the host variable SECRET_KEY is not set"):
        resolve_env(env, {})


def test_a_secret_reaches_the_agent_and_is_written_nowhere_in_the_run(tmp_path: Path) -> None:
    canary = "canary-value-5d1e2f"
    split = f'"{canary[:8]}""{canary[8:]}"'  # the command checks the value without spelling it whole
    write_task(
        tmp_path / "tasks",
        f"""
        task_id: secret
        initial_prompt: use the key
        agent:
          type: command
          command: 'test "$API_KEY" = {split} && echo "$API_KEY" | wc -c > ok.txt'
          env: {{API_KEY: {{from_env: SECRET_FOR_TEST}}}}
        success_criteria: [{{type: file_exists, path: ok.txt}}]
        """,
    )
    env = {**os.environ, "SECRET_FOR_TEST": canary}

    result = subprocess.run(
        [sys.executable, "-m", "coder_eval", "run", "tasks", "--no-report"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr  # the agent saw the value
    files = [p for p in (tmp_path / "runs").rglob("*") if p.is_file()]
    assert files and not [p for p in files if canary in p.read_text(errors="replace")]


def test_switching_kind_leaves_out_the_other_kinds_fields(tmp_path: Path) -> None:
    minimal_task(
        tmp_path / "tasks",
        "t",
        extra="agent: {type: claude-code, setting_sources: [], allowed_tools: [Bash]}\n",
    )
    (tmp_path / "exp.yaml").write_text(
        "experiment_id: e\ndefaults: {agent: {permission_mode: plan}}\nvariants: [{variant_id: v}]\n"
        "tasks: [tasks]\n"
    )

    quiet = coder_eval("plan", "tasks", "--agent", "oracle", cwd=tmp_path)
    said = coder_eval("plan", "-e", "exp.yaml", "--agent", "oracle", cwd=tmp_path)

    assert quiet.returncode == 0, quiet.stderr
    assert "not a field" not in quiet.stderr  # the task's own Claude Code fields: --agent chose another
    assert said.returncode == 0, said.stderr
    assert "agent.permission_mode (set by experiment) is not a field of the 'oracle' agent" in said.stderr
