"""The OpenAI Responses and Gemini dialects of the scripted server, over HTTP, and the rewriting of
scripted tool calls into each CLI's own tools."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from coder_eval.scripted import ScriptedServer
from coder_eval.scripted.calls import native_call
from coder_eval.scripted.gemini import GEMINI
from coder_eval.scripted.openai_responses import RESPONSES
from coder_eval.scripted.script import ToolUse
from coder_eval.scripted.skills import listed_skills, loads_skill, offers_skill
from coder_eval.scripted.turns import RequestView

SCRIPT = {
    "model": "gpt-5.1-codex",
    "turns": [
        {"blocks": [{"text": "Looking."}, {"tool_use": {"name": "Bash", "input": {"command": "ls"}}}]},
        {"when": {"last_tool_result_contains": "a.py"}, "blocks": [{"text": "Found a.py."}]},
    ],
}
CODEX_TOOLS = [{"type": "function", "name": "exec_command"}, {"type": "custom", "name": "apply_patch"}]
GEMINI_TOOLS = [{"functionDeclarations": [{"name": "run_shell_command"}, {"name": "write_file"}]}]


def post(server: ScriptedServer, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        server.base_url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def sse_data(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


def codex_body(*items: dict[str, Any]) -> dict[str, Any]:
    opening = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]}
    return {"model": "m", "stream": True, "tools": CODEX_TOOLS, "input": [opening, *items]}


def test_responses_streams_a_call_in_codex_form_then_reads_its_output(serve: Any) -> None:
    server = serve(SCRIPT)
    status, raw = post(server, "/v1/responses", codex_body())
    events = sse_data(raw)

    assert status == 200 and events[0]["type"] == "response.created"
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [i["type"] for i in done] == ["message", "function_call"]
    assert done[1]["name"] == "exec_command" and json.loads(done[1]["arguments"]) == {"cmd": "ls"}
    usage = events[-1]["response"]["usage"]
    assert events[-1]["type"] == "response.completed" and usage["input_tokens"] > 0

    call = {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "ls"}', "call_id": "c1"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "a.py\n"}
    _, raw = post(server, "/v1/responses", codex_body(done[0], call, output))
    final = [e["item"] for e in sse_data(raw) if e["type"] == "response.output_item.done"]
    assert final[0]["content"][0]["text"] == "Found a.py."
    assert [r.turn for r in server.requests] == [0, 1]
    assert sse_data(raw)[-1]["response"]["usage"]["input_tokens_details"]["cached_tokens"] > 0


def test_responses_errors_have_the_openai_shape(serve: Any) -> None:
    server = serve({"turns": [{"error": {"kind": "rate_limit"}}]})
    status, raw = post(server, "/v1/responses", codex_body())

    assert status == 429 and json.loads(raw)["error"]["code"] == "rate_limit_exceeded"


def test_gemini_streams_function_calls_and_usage(serve: Any) -> None:
    server = serve(SCRIPT)
    body = {"contents": [{"role": "user", "parts": [{"text": "list files"}]}], "tools": GEMINI_TOOLS}
    status, raw = post(server, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body)
    chunks = sse_data(raw)

    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert status == 200 and parts[0] == {"text": "Looking."}
    assert parts[1] == {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["usageMetadata"]["promptTokenCount"] > 0
    assert chunks[-1]["modelVersion"] == "gpt-5.1-codex"


def test_gemini_without_stream_and_its_errors(serve: Any) -> None:
    server = serve({"turns": [{"error": {"kind": "auth", "times": 1}}, {"blocks": [{"text": "Hi."}]}]})
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": GEMINI_TOOLS}
    status, raw = post(server, "/v1beta/models/g:generateContent", body)
    assert status == 401 and json.loads(raw)["error"]["status"] == "UNAUTHENTICATED"

    status, raw = post(server, "/v1beta/models/g:generateContent", body)
    assert status == 200 and json.loads(raw)["candidates"][0]["content"]["parts"] == [{"text": "Hi."}]


def test_gemini_view_counts_model_turns_and_reads_function_responses() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "x", "response": {"output": "a.py"}}}]},
        ],
        "tools": GEMINI_TOOLS,
    }
    view = GEMINI.view(body)

    assert (view.assistant_count, view.last_tool_results) == (1, "a.py")
    assert view.calls == (("Bash", '{"command": "ls"}'),)


def view(tools: set[str], text: str = "", cwd: str | None = "/w", outputs: str = "") -> RequestView:
    return RequestView(
        tools=frozenset(tools),
        text=text,
        last_tool_results="",
        assistant_count=0,
        conversation="c",
        skills=listed_skills(text),
        cwd=cwd,
        outputs=outputs,
    )


@pytest.mark.parametrize(
    ("tools", "name", "expected"),
    [
        ({"Bash"}, "Bash", {"command": "ls"}),
        ({"bash"}, "bash", {"command": "ls"}),
        ({"run_shell_command"}, "run_shell_command", {"command": "ls"}),
        ({"exec_command"}, "exec_command", {"cmd": "ls"}),
    ],
)
def test_a_scripted_shell_call_becomes_each_clis_shell(
    tools: set[str], name: str, expected: dict[str, Any]
) -> None:
    call = native_call(ToolUse(name="Bash", input={"command": "ls"}), view(tools))

    assert (call.name, call.input) == (name, expected)


def test_file_tools_get_absolute_paths_where_the_cli_wants_them() -> None:
    read = ToolUse(name="Read", input={"file_path": "src/a.py"})

    assert native_call(read, view({"bash", "read"})).input == {"filePath": "/w/src/a.py"}
    assert native_call(read, view({"Bash", "Read"})).input == {"file_path": "src/a.py"}
    assert native_call(read, view({"exec_command"})).input == {"cmd": "cat src/a.py"}


def test_codex_edits_become_whole_line_patches() -> None:
    edit = ToolUse(name="Edit", input={"file_path": "a.py", "old_string": "a - b", "new_string": "a + b"})
    call = native_call(edit, view({"exec_command"}, outputs="def add(a, b):\n    return a - b  # add\n"))

    assert call.name == "apply_patch"
    assert call.input == (
        "*** Begin Patch\n*** Update File: a.py\n@@\n"
        "-    return a - b  # add\n+    return a + b  # add\n*** End Patch\n"
    )


def test_skills_listed_by_each_cli() -> None:
    claude = "- site-tools:sitectl: Manage the site."
    xml = (
        "<available_skills>\n <skill>\n <name>sitectl</name>\n <description>d</description>\n"
        " <location>/h/skills/sitectl/SKILL.md</location>\n </skill>"
    )
    codex = (
        "### Skill roots\n- `r0` = `/h/.codex/skills`\n### Available skills\n"
        "- sitectl: Manage. (file: r0/sitectl/SKILL.md)\n</skills_instructions>"
    )

    assert listed_skills(claude) == {"site-tools:sitectl": None}
    assert listed_skills(xml) == {"sitectl": "/h/skills/sitectl/SKILL.md"}
    assert listed_skills(codex) == {"sitectl": "/h/.codex/skills/sitectl/SKILL.md"}
    assert offers_skill(listed_skills(claude), {"Skill"}, "sitectl")
    assert not offers_skill(listed_skills(claude), {"Bash"}, "sitectl")
    assert offers_skill(listed_skills(codex), {"exec_command"}, "sitectl")
    assert not offers_skill(listed_skills(codex), {"exec_command"}, "other")


def test_a_skill_is_loaded_by_its_tool_or_by_reading_its_file() -> None:
    assert loads_skill((("Skill", '{"skill": "site-tools:sitectl"}'),), "sitectl")
    assert loads_skill((("Bash", '{"command": "cat /h/.codex/skills/sitectl/SKILL.md"}'),), "sitectl")
    assert not loads_skill((("Bash", '{"command": "cat skills/other/SKILL.md"}'),), "sitectl")


def test_responses_view_reads_turns_and_cwd() -> None:
    context = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "<cwd>/w/x</cwd>"}],
    }
    body = codex_body(
        {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "ls"}'},
        {"type": "function_call_output", "output": "a.py"},
    )
    body["input"].insert(0, context)
    seen = RESPONSES.view(body)

    assert (seen.assistant_count, seen.last_tool_results, seen.cwd) == (1, "a.py", "/w/x")
    assert seen.calls == (("Bash", '{"command": "ls"}'),)
