"""``coder-eval show``: a transcript, the nearest ids for a wrong one, and --follow on a running episode."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from coder_eval.cli.show import follow_transcript
from coder_eval.errors import InputError
from coder_eval.run_lock import RunLock
from coder_eval.trajectory import EpisodeEnd, EpisodeStart, Message, ToolCall, TrajectoryWriter
from tests.helpers import REPO, coder_eval, flagged_task, minimal_task

RUN = REPO / "tests" / "fixtures" / "runs" / "three-way"


def test_show_prints_the_transcript(tmp_path: Path) -> None:
    result = coder_eval("show", str(RUN), "csv-report--baseline--r0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# csv-report--baseline--r0 (task csv-report")


def test_an_unknown_episode_suggests_the_nearest_ids_not_all_of_them(tmp_path: Path) -> None:
    result = coder_eval("show", str(RUN), "csv-reprot--basline--r0", cwd=tmp_path)
    assert result.returncode == 2
    message = result.stderr.replace("\n", " ")
    assert "no episode 'csv-reprot--basline--r0'; nearest: csv-report--baseline--r0" in message
    assert "(18 in the run)" in message
    assert message.count("--r0") <= 6  # five suggestions and the id asked for


def test_a_run_without_an_episode_id_names_a_few(tmp_path: Path) -> None:
    result = coder_eval("show", str(RUN), cwd=tmp_path)
    assert result.returncode == 2
    assert "name an episode (it has 18), e.g. csv-report--baseline--r0" in result.stderr


START = EpisodeStart(
    run_id="r",
    episode_id="t--v--r0",
    task_id="t",
    variant_id="v",
    repeat=0,
    seed=1,
    task={},
    agent={"kind": "oracle"},
)


def make_run(root: Path) -> Path:
    """A running run directory (a copy of the fixture's manifest) with no trajectory yet."""
    run = root / "run"
    (run / "episodes").mkdir(parents=True)
    shutil.copy(RUN / "run.json", run / "run.json")
    text = (run / "run.json").read_text().replace('"completed"', '"running"')
    (run / "run.json").write_text(text.replace("csv-report--baseline--r0", "t--v--r0"))
    return run


def test_follow_prints_each_event_as_it_is_written(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    writer = RunLock.acquire(run)  # the run's own process holds it while it runs
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    follower = subprocess.Popen(
        [sys.executable, "-m", "coder_eval", "show", str(run), "t--v--r0", "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert follower.stdout is not None
    try:
        with TrajectoryWriter(run / "episodes" / "t--v--r0.jsonl") as sink:
            sink.write(START)
            sink.write(Message(role="user", content=[{"type": "text", "text": "write ok"}]))
            assert follower.stdout.readline().startswith("# t--v--r0 (task t")
            follower.stdout.readline()  # the agent line of the header
            assert follower.stdout.readline().strip() == "[user] write ok"  # before the episode ends
            sink.write(ToolCall(id="1", name="Bash", input={"command": "echo ok > ok.txt"}))
            assert follower.stdout.readline().rstrip() == "  → Bash: echo ok > ok.txt"
            sink.write(EpisodeEnd(outcome="pass", status="completed"))
        rest = follower.communicate(timeout=30)[0]
    finally:
        writer.release()
        if follower.poll() is None:
            follower.kill()
    assert follower.returncode == 0
    assert rest.startswith("= pass (completed)")


def test_follow_of_a_running_manifest_nobody_writes_gives_up(tmp_path: Path) -> None:
    """A run killed with SIGKILL still says ``running``; its free lock says nobody is writing it."""
    run = make_run(tmp_path)
    result = coder_eval("show", str(run), "t--v--r0", "--follow", cwd=tmp_path)
    assert result.returncode == 2 and "never started this episode" in result.stderr


def test_follow_names_an_undecodable_line_and_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = START.model_dump_json().encode() + b"\n"
    cut = '{"type": "message", "role": "user", "content": "caf\u00e9'.encode()[:-1]  # inside "é"
    end = EpisodeEnd(outcome="fail", status="completed").model_dump_json().encode() + b"\n"
    path.write_bytes(first + cut + b"\n" + end)
    lines = list(follow_transcript(path, poll_s=0.01))
    assert f"! unreadable line (not UTF-8 at byte {len(first) + len(cut) - 1})" in lines
    assert lines[-1].startswith("= fail")


def test_follow_waits_for_a_planned_episode_and_gives_up_when_the_run_stops(tmp_path: Path) -> None:
    path = tmp_path / "never.jsonl"
    checks = iter([False, False, True])
    with pytest.raises(InputError, match="never started this episode"):
        list(follow_transcript(path, stopped=lambda: next(checks), sleep=lambda _: None))


def test_follow_reads_a_line_only_once_it_is_complete(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = START.model_dump_json()
    path.write_text(line[:20])
    writer = threading.Timer(
        0.3,
        lambda: path.write_text(
            line + "\n" + EpisodeEnd(outcome="fail", status="completed").model_dump_json() + "\n"
        ),
    )
    writer.start()
    lines = list(follow_transcript(path, poll_s=0.05))
    writer.join()
    assert lines[0].startswith("# t--v--r0") and lines[-1].startswith("= fail")
    assert not any(text.startswith("!") for text in lines)


def test_follow_on_a_finished_run_prints_each_verdict_then_the_totals(tmp_path: Path) -> None:
    result = coder_eval("show", str(RUN), "--follow", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert (
        "csv-report--with_skill--r0: = fail (max_turns), 242.5 s, 5810 tokens, 2 turns, cost $0.0187" in lines
    )
    assert sum(": = " in line for line in lines) == 18  # one verdict per episode, and nothing else of them
    assert not any(": [assistant]" in line for line in lines)
    assert f"run: {RUN}  pass 11  fail 7  invalid 0" in lines


def test_follow_on_a_run_follows_every_episode_until_the_run_stops(tmp_path: Path) -> None:
    flag = tmp_path / "go"
    for task_id in ("one", "two"):
        flagged_task(tmp_path / "tasks", task_id, flag)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "coder_eval"]
    run = subprocess.Popen(
        [*command, "run", "tasks", "-j", "2", "--run-dir", "run", "--no-report"], cwd=tmp_path, env=env
    )
    follower = None
    try:
        while len(list((tmp_path / "run" / "episodes").glob("*.jsonl"))) < 2:
            time.sleep(0.1)
        follower = subprocess.Popen(
            [*command, "show", "run", "--follow"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
        )
        assert follower.stdout is not None
        assert follower.stdout.readline().split(": ")[1].startswith("# ")  # an episode's header, as it runs
        flag.touch()
        rest = follower.communicate(timeout=120)[0]
        assert run.wait(timeout=120) == 0
    finally:
        for process in (run, follower):
            if process is not None and process.poll() is None:
                process.kill()
    assert follower.returncode == 0
    for episode in ("one--default--r0", "two--default--r0"):
        assert f"{episode}: -- verify --" in rest
        assert any(line.startswith(f"{episode}: = pass (completed)") for line in rest.splitlines())
    assert "run: run  pass 2  fail 0  invalid 0" in rest


ASCII_LOCALES = [
    {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"},
    {"PYTHONIOENCODING": "ascii"},
]
ASCII_HELLO = "[assistant] H\\xe9llo - \\u65e5\\u672c\\u8a9e \\u2713"


def ascii_episode(path: Path) -> Path:
    with TrajectoryWriter(path) as sink:
        sink.write(START)
        sink.write(Message(role="assistant", content=[{"type": "text", "text": "Héllo — 日本語 ✓"}]))
        sink.write(ToolCall(id="1", name="Bash", input={"command": "ls"}))
        sink.write(EpisodeEnd(outcome="pass", status="completed"))
    return path


@pytest.mark.parametrize(
    ("locale", "encoding", "hello"),
    [
        (ASCII_LOCALES[0], "ascii", ASCII_HELLO),
        (ASCII_LOCALES[1], "ascii", ASCII_HELLO),
        ({"PYTHONIOENCODING": "latin-1"}, "latin-1", "[assistant] Héllo - \\u65e5\\u672c\\u8a9e \\u2713"),
    ],
    ids=["LC_ALL=C", "ascii", "latin-1"],
)
def test_show_falls_back_to_ascii_under_a_non_utf8_locale(
    tmp_path: Path, locale: dict[str, str], encoding: str, hello: str
) -> None:
    path = ascii_episode(tmp_path / "t--v--r0.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIOENCODING"))} | locale
    for follow in ([], ["--follow"]):
        result = subprocess.run(
            [sys.executable, "-m", "coder_eval", "show", str(path), *follow],
            env=env,
            capture_output=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        lines = result.stdout.decode(encoding).splitlines()
        assert "  -> Bash: ls" in lines and hello in lines


def test_run_falls_back_to_ascii_under_a_non_utf8_locale(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "greet", extra="agent: {kind: oracle}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_")} | ASCII_LOCALES[0]
    result = subprocess.run(
        [sys.executable, "-m", "coder_eval", "run", "tasks", "--no-report", "--run-dir", "run"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    stdout = result.stdout.decode("ascii")
    assert "| greet" not in stdout and "| default |    1 |" in stdout  # the table in ASCII


def test_follow_started_before_the_run_waits_for_it(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "early", extra="agent: {kind: oracle}\n")
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "coder_eval"]
    follower = subprocess.Popen(
        [*command, "show", "runs/new", "--follow", "--wait", "120"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert follower.stderr is not None
        assert (
            "waiting up to 120 s for a run to start in runs/new (no run.json yet)"
            in follower.stderr.readline()
        )
        ran = coder_eval("run", "tasks", "--run-dir", "runs/new", "--no-report", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        out, _ = follower.communicate(timeout=120)
    finally:
        if follower.poll() is None:
            follower.kill()
    assert follower.returncode == 0
    assert "early--default--r0: = pass (completed)" in out and "run: runs/new  pass 1" in out


def test_follow_gives_up_waiting_with_what_to_do(tmp_path: Path) -> None:
    from coder_eval.cli.show import wait_for_run

    clock = iter(range(100))
    with pytest.raises(InputError, match=r"no run started there within 3 s \(no run.json\); start one with"):
        wait_for_run(tmp_path / "none", 3, sleep=lambda s: None, clock=lambda: float(next(clock)))
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a run folder"):
        wait_for_run(tmp_path / "file", 3)
    result = coder_eval("show", "nowhere", "--follow", "--wait", "0.5", cwd=tmp_path)
    assert result.returncode == 2 and "no run started there within 0.5 s" in result.stderr
