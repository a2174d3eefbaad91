"""The raw event log (``CODER_EVAL_RAW_SDK_LOG=1`` or ``run --raw-events``): every event an agent CLI
emitted, per episode, in ``raw/<episode>.jsonl`` of the run; bounded, and held as escaped data.

The log itself is tested here; end to end, each real CLI (Claude Code, Codex, OpenCode, Gemini CLI, and
the ``command`` agent) runs a scripted task through ``coder-eval run`` with the switch, and without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from coder_eval.agents import raw_events
from coder_eval.agents.raw_events import RawEventLog, raw_events_enabled, raw_events_path
from tests.agents.test_cli_agents import FOUND, MODELS
from tests.helpers import coder_eval


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="ascii").splitlines()]


@pytest.mark.parametrize("value", ["1", "true", "YES", " on "])
def test_the_switch_takes_the_original_true_values(value: str) -> None:
    assert raw_events_enabled({"CODER_EVAL_RAW_SDK_LOG": value})


@pytest.mark.parametrize("value", ["", "0", "false", "no", "2"])
def test_anything_else_leaves_it_off(value: str) -> None:
    assert not raw_events_enabled({"CODER_EVAL_RAW_SDK_LOG": value})
    assert not raw_events_enabled({})


def test_the_log_goes_beside_the_episodes_folder() -> None:
    path = raw_events_path(Path("runs/r/episodes/t--a--r0.jsonl"))
    assert path == Path("runs/r/raw/t--a--r0.jsonl")


def test_events_and_lines_are_kept_in_order_as_escaped_ascii(tmp_path: Path) -> None:
    hostile = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 <script>alert(1)</script> \u202e bad \udcff"
    with RawEventLog.open(tmp_path / "raw" / "e.jsonl") as raw:
        raw.event("stdout", {"type": "assistant", "text": hostile})
        raw.line("stderr", hostile)
        raw.event("stdout", [1, 2])

    text = (tmp_path / "raw" / "e.jsonl").read_bytes()
    assert all(32 <= byte < 127 or byte == 10 for byte in text)  # no escape, bidi or control byte
    records = lines(tmp_path / "raw" / "e.jsonl")
    assert [(r["seq"], r["stream"]) for r in records] == [(0, "stdout"), (1, "stderr"), (2, "stdout")]
    assert records[0]["event"] == {"type": "assistant", "text": hostile}
    assert records[1]["text"] == hostile and records[2]["event"] == [1, 2]
    assert all(r["t"] >= 0 for r in records)


def test_a_long_event_keeps_its_start_and_says_how_long_it_was(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    with RawEventLog.open(path) as raw:
        raw.event("stdout", {"output": "x" * (raw_events.EVENT_LIMIT * 2)})

    (record,) = lines(path)
    assert record["truncated"] is True and "event" not in record
    assert len(record["text"]) == raw_events.EVENT_LIMIT and record["text"].startswith('{"output": "xxx')
    assert record["length"] > raw_events.EVENT_LIMIT * 2


def test_past_the_log_limit_events_are_counted_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(raw_events, "LOG_LIMIT", 1000)
    path = tmp_path / "e.jsonl"
    with RawEventLog.open(path) as raw:
        for i in range(100):
            raw.event("stdout", {"i": i, "pad": "y" * 40})

    records = lines(path)
    assert path.stat().st_size < 1200
    assert records[-1] == {
        "seq": len(records) - 1,
        "t": records[-1]["t"],
        "stream": "harness",
        "dropped": 101 - len(records),
    }


def test_a_value_json_cannot_hold_is_kept_as_its_repr(tmp_path: Path) -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with RawEventLog.open(tmp_path / "e.jsonl") as raw:
        raw.event("stdout", cycle)

    (record,) = lines(tmp_path / "e.jsonl")
    assert record["text"] == "[[...]]"


def test_a_log_that_cannot_be_written_costs_the_log_not_the_caller(tmp_path: Path) -> None:
    raw = RawEventLog.open(tmp_path / "e.jsonl")
    raw._handle.close()  # as a full disk would fail the next write

    raw.event("stdout", {"a": 1})
    raw.close()


def suite(folder: Path, kind: str) -> Path:
    """One scripted task for agent ``kind`` (the script speaks Claude Code's tools; the scripted server
    rewrites them for the CLI that asks)."""
    (folder / "tasks").mkdir(parents=True)
    task = {
        "task_id": "echo",
        "initial_prompt": "Write hello into out.txt.",
        "agent": {"type": kind, "model": "scripted"},
        "scripted": {
            "model": MODELS.get(kind, "claude-sonnet-4-5"),
            "final_text": "Wrote out.txt.",
            "turns": [
                {"blocks": [{"tool_use": {"name": "Bash", "input": {"command": "echo hello > out.txt"}}}]},
                {"blocks": [{"text": "Wrote out.txt."}]},
            ],
        },
        "success_criteria": [{"type": "file_contains", "path": "out.txt", "includes": ["hello"]}],
    }
    (folder / "tasks" / "echo.yaml").write_text(yaml.safe_dump(task, sort_keys=False))
    return folder


KINDS = [
    "claude-code",
    *(
        pytest.param(kind, marks=pytest.mark.skipif(FOUND[kind]() is None, reason=f"{kind}: make setup"))
        for kind in ("codex", "opencode", "gemini")
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_each_cli_agent_logs_its_raw_events_with_the_switch(tmp_path: Path, kind: str) -> None:
    folder = suite(tmp_path, kind)

    result = coder_eval("run", "tasks", "--raw-events", "--no-report", "--no-index", cwd=folder, timeout=600)

    assert result.returncode == 0, result.stdout + result.stderr
    run = folder / "runs" / "latest"
    (log,) = (run / "raw").iterdir()
    assert log.name == "echo--default--r0.jsonl"
    assert [p.name for p in (run / "episodes").iterdir()] == ["echo--default--r0.jsonl"]
    records = lines(log)
    events = [r["event"] for r in records if r["stream"] == "stdout" and "event" in r]
    assert events and all(isinstance(e, dict) for e in events)
    assert "echo hello > out.txt" in json.dumps(events)  # the tool call, as the CLI reported it
    assert [r["seq"] for r in records] == list(range(len(records)))


@pytest.mark.slow
def test_the_variable_is_the_same_switch_and_off_there_is_no_log(tmp_path: Path) -> None:
    import os

    folder = suite(tmp_path, "command")
    task = folder / "tasks" / "echo.yaml"
    data = yaml.safe_load(task.read_text())
    data["agent"] = {
        "type": "command",
        "command": 'echo \'{"type": "hi"}\'; echo plain; echo hello > out.txt; echo oops >&2',
    }
    del data["scripted"]
    task.write_text(yaml.safe_dump(data))
    env = {k: v for k, v in os.environ.items() if k != raw_events.SWITCH}

    off = coder_eval("run", "tasks", "--no-report", "--no-index", cwd=folder, env=env)
    assert off.returncode == 0, off.stdout + off.stderr
    assert not (folder / "runs" / "latest" / "raw").exists()

    on = coder_eval(
        "run", "tasks", "--no-report", "--no-index", cwd=folder, env={**env, raw_events.SWITCH: "1"}
    )
    assert on.returncode == 0, on.stdout + on.stderr
    records = lines(folder / "runs" / "latest" / "raw" / "echo--default--r0.jsonl")
    assert [(r["stream"], r.get("event", r.get("text"))) for r in records] == [
        ("stdout", {"type": "hi"}),
        ("stdout", "plain"),
        ("stderr", "oops"),
    ]
