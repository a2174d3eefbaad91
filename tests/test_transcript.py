"""Transcripts: a trajectory read top to bottom, from the library and from ``coder-eval show``."""

from __future__ import annotations

from pathlib import Path

from coder_eval.trajectory import EpisodeStart, TrajectoryWriter
from coder_eval.transcript import input_summary, transcript_text
from tests.helpers import coder_eval, minimal_task, write_task


def test_oracle_run_reads_top_to_bottom(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "greet", extra="agent: {kind: oracle}\n")
    assert coder_eval("run", "tasks", "--no-report", cwd=tmp_path).returncode == 0
    result = coder_eval("show", "runs/latest", "greet--default--r0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "# greet--default--r0 (task greet, variant default, repeat 0)"
    assert lines[1].startswith("  agent oracle, model default model, seed ")
    assert lines[2] == "-- setup --" and lines[3].startswith("-- agent in ")
    assert lines[4:8] == [
        "  → Bash: echo ok > ok.txt",
        "  ← ",
        "[assistant] Reference solution applied.",
        "-- stop --",
    ]
    assert "criterion 0-file_contains (file_contains): pass, score 1.00" in lines
    assert lines[-1].startswith("= pass (completed), ")


WHY = """
task_id: why
initial_prompt: write ok to ok.txt
agent: {kind: none}
success_criteria:
  - {id: greeting, type: file_contains, path: ok.txt, includes: [ok], description: ok.txt says ok}
  - {id: tests, type: run_command, command: "echo 'checking ok.txt'; echo '1 failed' >&2; exit 1"}
  - {id: ran, type: run_command, command: "true"}
"""


def test_a_criterion_that_failed_says_what_it_checks_and_what_it_recorded(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", WHY)
    assert coder_eval("run", "tasks", "--no-report", cwd=tmp_path).returncode == 0
    lines = coder_eval("show", "runs/latest", "why--default--r0", cwd=tmp_path).stdout.splitlines()
    greeting = lines.index("criterion greeting (file_contains): fail, score 0.00")
    assert lines[greeting + 1 : greeting + 3] == [
        "    checks: ok.txt says ok",
        "    error: no file matches 'ok.txt'",
    ]
    tests = lines.index("criterion tests (run_command): fail, score 0.00")
    evidence = lines[tests + 1 : lines.index("criterion ran (run_command): pass, score 1.00")]
    assert evidence[:3] == ["    exit_code: 1", "    timed_out: false", "    failed: exit_code"]
    assert evidence[3] == "    output: checking ok.txt" and evidence[-1] == "  │ 1 failed"  # stdout, stderr
    assert all(line.startswith("  │ ") for line in evidence[4:])


def test_show_lists_episodes_when_none_is_named_and_suggests_on_a_typo(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "greet", extra="agent: {kind: oracle}\n")
    assert coder_eval("run", "tasks", "--no-report", cwd=tmp_path).returncode == 0
    listing = coder_eval("show", "runs/latest", cwd=tmp_path)
    assert listing.returncode == 2 and "greet--default--r0" in listing.stderr
    typo = coder_eval("show", "runs/latest", "greet--default--r1", cwd=tmp_path)
    assert typo.returncode == 2 and "nearest: greet--default--r0" in typo.stderr


def test_interrupted_trajectory_says_so(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    with TrajectoryWriter(path) as sink:
        sink.write(EpisodeStart(run_id="r", episode_id="e", task_id="t", seed=1, scripted=True))
    text = transcript_text(path)
    assert "(scripted)" in text
    assert text.endswith("! no episode_end (interrupted)")


def test_input_summary_prefers_the_telling_field() -> None:
    assert input_summary({"command": "ls -la", "description": "list"}) == "ls -la"
    assert input_summary({"file_path": "a.py", "content": "x"}) == "a.py"
    assert input_summary({"x": 1}) == '{"x": 1}'
