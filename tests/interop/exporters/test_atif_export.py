"""coder_eval trajectories as ATIF documents: steps, tool calls and observations, metrics, sub-agents,
the episode's verdict, and incomplete trajectories; through ``export_atif`` and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coder_eval.errors import InputError
from coder_eval.interop.exporters.atif import AtifTrajectory
from coder_eval.interop.exporters.atif_export import export_atif
from tests.helpers import coder_eval
from tests.interop.builders import (
    CALL_USAGE,
    END_USAGE,
    RUN_ID,
    SUB_USAGE,
    write_agent_episode,
    write_interrupted_episode,
    write_oracle_episode,
    write_orphan_result_episode,
    write_silent_episode,
)


def exported(path: Path, out: Path) -> dict[str, Any]:
    """The ATIF document of one trajectory, as JSON, after a round trip through the models."""
    [target] = export_atif(path, out).written
    document: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
    AtifTrajectory.model_validate(document)
    return document


@pytest.fixture
def agent(tmp_path: Path) -> dict[str, Any]:
    return exported(write_agent_episode(tmp_path), tmp_path / "atif")


def test_each_message_is_a_step_from_its_speaker(agent: dict[str, Any]) -> None:
    steps = agent["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, 7))
    assert [s["source"] for s in steps] == ["system", "user", "agent", "agent", "user", "agent"]
    assert json.loads(steps[0]["message"])[0]["claude_code_version"] == "2.1.0"
    assert steps[1]["message"] == "Fix the bug." and steps[1]["extra"]["content"][0]["type"] == "image"
    assert (steps[2]["message"], steps[2]["reasoning_content"]) == ("Looking.", "Look first.")
    assert steps[4]["extra"] == {"simulated": True} and steps[5]["message"] == "Fixed."
    assert steps[2]["timestamp"] == "2026-11-30T12:00:03+00:00"


def test_tool_calls_join_their_message_and_results_observe_them(agent: dict[str, Any]) -> None:
    step = agent["steps"][2]
    assert [(c["tool_call_id"], c["function_name"]) for c in step["tool_calls"]] == [
        ("a", "Bash"),
        ("b", "Read"),
    ]
    assert step["tool_calls"][0]["arguments"] == {"command": "ls"}
    first, second = step["observation"]["results"]
    assert (first["source_call_id"], first["content"]) == ("a", "calc")
    assert first["extra"] == {"output_chars": 4, "is_error": False, "exit_code": 0, "duration_s": 0.25}
    assert (second["source_call_id"], second["extra"]["is_error"]) == ("b", True)


def test_each_model_call_has_its_token_metrics(agent: dict[str, Any]) -> None:
    step = agent["steps"][2]
    assert step["metrics"] == {
        "prompt_tokens": CALL_USAGE.input_tokens
        + CALL_USAGE.cache_read_tokens
        + CALL_USAGE.cache_creation_tokens,
        "completion_tokens": CALL_USAGE.output_tokens,
        "cached_tokens": CALL_USAGE.cache_read_tokens,
        "extra": {
            "input_tokens": CALL_USAGE.input_tokens,
            "cache_creation_tokens": CALL_USAGE.cache_creation_tokens,
        },
    }
    assert (step["model_name"], step["llm_call_count"]) == ("claude-sonnet-4-5", 1)
    assert "metrics" not in agent["steps"][1]


def test_final_metrics_are_the_episode_totals(agent: dict[str, Any]) -> None:
    final = agent["final_metrics"]
    assert final["total_prompt_tokens"] == END_USAGE.total - END_USAGE.output_tokens
    assert (final["total_completion_tokens"], final["total_cached_tokens"]) == (
        END_USAGE.output_tokens,
        END_USAGE.cache_read_tokens,
    )
    assert (final["total_cost_usd"], final["total_steps"]) == (0.0125, 6)


def test_a_sub_agent_is_an_embedded_trajectory_referenced_by_its_call(agent: dict[str, Any]) -> None:
    [sub] = agent["subagent_trajectories"]
    assert sub["trajectory_id"] == "t" and sub["agent"]["model_name"] == "claude-haiku-4-5"
    assert [s["source"] for s in sub["steps"]] == ["user", "agent"]
    assert sub["steps"][1]["tool_calls"][0]["function_name"] == "Grep"
    assert sub["steps"][1]["observation"]["results"][0]["content"] == "calc/core.py:2"
    assert sub["steps"][1]["metrics"]["completion_tokens"] == SUB_USAGE.output_tokens
    [result] = agent["steps"][3]["observation"]["results"]
    assert result["subagent_trajectory_ref"] == [{"trajectory_id": "t"}]
    assert result["content"] == "the bug is in calc/core.py"


def test_the_episode_its_agent_and_its_verdict_travel_in_extra(agent: dict[str, Any]) -> None:
    assert (agent["schema_version"], agent["session_id"]) == ("ATIF-v1.7", f"{RUN_ID}/fix--default--r0")
    assert agent["agent"]["name"] == "claude-code" and agent["agent"]["version"] == "2.1.0"
    ours = agent["extra"]["coder_eval"]
    assert (ours["task_id"], ours["variant_id"], ours["repeat"], ours["seed"]) == ("fix", "default", 0, 7)
    assert (ours["outcome"], ours["status"], ours["score"]) == ("pass", "completed", 1.0)
    assert ours["timings"]["total_s"] == 8.0 and ours["task"]["initial_prompt"] == "Fix the bug."
    assert [c["criterion_id"] for c in ours["criteria"]] == ["tests"] and ours["problems"] == []


def test_scripted_commands_without_a_model_are_steps_of_their_own(tmp_path: Path) -> None:
    document = exported(write_oracle_episode(tmp_path), tmp_path / "atif")
    steps = document["steps"]
    assert [(s["message"], [c["tool_call_id"] for c in s.get("tool_calls", [])]) for s in steps] == [
        ("", ["oracle-1"]),
        ("", ["oracle-2"]),
        ("ok", []),
    ]
    assert not any("llm_call_count" in s or "metrics" in s for s in steps)
    assert document["agent"]["name"] == "oracle" and "total_cost_usd" not in document["final_metrics"]


def test_an_interrupted_episode_is_exported_as_far_as_it_got(tmp_path: Path) -> None:
    document = exported(write_interrupted_episode(tmp_path), tmp_path / "atif")
    assert "incomplete: no episode_end (interrupted)" in document["notes"]
    assert document["extra"]["coder_eval"]["outcome"] == "invalid"
    [result] = document["steps"][-1]["observation"]["results"]  # the sub-agent's call never returned
    assert result == {"source_call_id": "t", "subagent_trajectory_ref": [{"trajectory_id": "t"}]}
    summed = 2 * CALL_USAGE.output_tokens + SUB_USAGE.output_tokens
    assert document["final_metrics"]["total_completion_tokens"] == summed


def test_an_episode_without_steps_still_has_one(tmp_path: Path) -> None:
    document = exported(write_silent_episode(tmp_path), tmp_path / "atif")
    assert document["steps"] == [{"step_id": 1, "source": "system", "message": "The agent recorded no step."}]


def test_a_result_without_its_call_is_a_system_observation(tmp_path: Path) -> None:
    [step] = exported(write_orphan_result_episode(tmp_path), tmp_path / "atif")["steps"]
    assert step["source"] == "system" and "lost" in step["message"]
    assert step["observation"]["results"][0]["extra"]["tool_use_id"] == "lost"
    assert "source_call_id" not in step["observation"]["results"][0]


def test_an_event_this_version_cannot_read_is_skipped_and_noted(tmp_path: Path) -> None:
    path = write_agent_episode(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.insert(3, json.dumps({"type": "checkpoint", "schema_version": 1, "ts": "2026-11-30T12:00:00Z"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    export = export_atif(path, tmp_path / "atif")
    document = json.loads(export.written[0].read_text(encoding="utf-8"))
    assert len(document["steps"]) == 6 and "line 4: invalid event" in document["notes"]
    assert export.problems == ["fix--default--r0.jsonl: line 4: invalid event (1 errors)"]


def test_a_folder_that_is_no_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a run directory"):
        export_atif(tmp_path, tmp_path / "atif")


def test_the_cli_exports_every_episode_of_a_run(tmp_path: Path) -> None:
    write_agent_episode(tmp_path)
    write_oracle_episode(tmp_path)
    write_interrupted_episode(tmp_path)
    result = coder_eval("export", str(tmp_path / RUN_ID), "--format", "atif", "--out", "atif", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "exported 3 trajectories (atif) to atif" in result.stdout
    assert "cut--default--r0.jsonl: no episode_end (interrupted)" in result.stderr
    names = sorted(p.name for p in (tmp_path / "atif").iterdir())
    assert names == ["cut--default--r0.json", "fix--default--r0.json", "oracle--default--r0.json"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere", "--out", "x"], "not a run directory"),
        ([".", "--format", "otel", "--out", "x"], "unknown export format 'otel'; valid: atif"),
    ],
)
def test_the_cli_refuses_bad_input_with_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = coder_eval("export", *args, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr
