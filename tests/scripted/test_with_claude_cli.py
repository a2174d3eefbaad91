"""The real Claude Code CLI (bundled in claude-agent-sdk) against the scripted server."""

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLI, run_claude

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CLI.exists(), reason="claude-agent-sdk has no bundled CLI"),
]

SKILL_SCRIPT = {
    "turns": [
        {
            "when": {"skill_offered": "sitectl"},
            "blocks": [{"tool_use": {"name": "Skill", "input": {"skill": "sitectl"}}}],
            "otherwise": [{"text": "No skill for that."}],
        },
        {"when": {"request_contains": "SITECTL-BODY-MARKER"}, "blocks": [{"text": "Read the skill."}]},
    ]
}


def last_user_text(request: Any) -> str:
    return json.dumps(request.body["messages"][-1])


def plugin(tmp_path: Path) -> Path:
    """A plugin directory with one skill (no .claude-plugin/plugin.json: the CLI does not need it)."""
    skill = tmp_path / "site-tools" / "skills" / "sitectl"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: sitectl\ndescription: Manage the site with sitectl. Use when deploying.\n---\n"
        "Run `echo SITECTL-BODY-MARKER` to deploy.\n"
    )
    return skill.parent.parent


def test_bash_tool_runs_and_its_result_reaches_the_next_request(serve: Any, tmp_path: Path) -> None:
    server = serve(
        {
            "turns": [
                {
                    "blocks": [
                        {"text": "Checking."},
                        {"tool_use": {"name": "Bash", "input": {"command": "echo hi-$((6*7))"}}},
                    ]
                },
                {"when": {"last_tool_result_contains": "hi-42"}, "blocks": [{"text": "Saw 42."}]},
            ]
        }
    )

    run = run_claude(server, tmp_path, "Say hi.")

    main = [r for r in server.requests if r.kind == "main"]
    assert (run.returncode, run.result["result"], run.result["num_turns"]) == (0, "Saw 42.", 2)
    assert [(r.turn, r.branch) for r in main] == [(0, "blocks"), (1, "blocks")]
    assert '"type": "tool_result"' in last_user_text(main[1]) and "hi-42" in last_user_text(main[1])


def test_skill_is_offered_and_loaded_with_the_plugin(serve: Any, tmp_path: Path) -> None:
    server = serve(SKILL_SCRIPT)

    run = run_claude(server, tmp_path, "Deploy the site.", "--plugin-dir", str(plugin(tmp_path)))

    assert run.result["result"] == "Read the skill."
    assert [r.branch for r in server.requests if r.kind == "main"] == ["blocks", "blocks"]


def test_skill_is_not_offered_without_the_plugin(serve: Any, tmp_path: Path) -> None:
    server = serve(SKILL_SCRIPT)

    run = run_claude(server, tmp_path, "Deploy the site.")

    assert run.result["result"] == "No skill for that."
    assert [r.branch for r in server.requests if r.kind == "main"] == ["otherwise"]


def test_subagent_requests_get_the_subagent_turns(serve: Any, tmp_path: Path) -> None:
    agent = {
        "description": "count",
        "prompt": "Count files",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    server = serve(
        {
            "turns": [
                {"blocks": [{"tool_use": {"name": "Agent", "input": agent}}]},
                {"when": {"last_tool_result_contains": "sub-done"}, "blocks": [{"text": "Main done."}]},
            ],
            "subagent_turns": [{"blocks": [{"text": "sub-done"}]}],
        }
    )

    run = run_claude(server, tmp_path, "Delegate.")

    assert run.result["result"] == "Main done."
    assert [r.kind for r in server.requests if r.kind != "other"] == ["main", "subagent", "main"]


def test_cli_retries_an_overloaded_turn(serve: Any, tmp_path: Path) -> None:
    server = serve(
        {"turns": [{"error": {"kind": "overloaded", "times": 1}}, {"blocks": [{"text": "Recovered."}]}]}
    )

    run = run_claude(server, tmp_path, "Go.")

    assert run.result["result"] == "Recovered."
    assert [r.status for r in server.requests if r.kind == "main"] == [529, 200]


def test_cli_reports_an_auth_error(serve: Any, tmp_path: Path) -> None:
    server = serve({"turns": [{"error": {"kind": "auth"}}]})

    run = run_claude(server, tmp_path, "Go.", CLAUDE_CODE_MAX_RETRIES="0")

    assert (run.returncode, run.result["is_error"], run.result["api_error_status"]) == (1, True, 401)
