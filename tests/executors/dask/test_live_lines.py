"""A dask episode's trajectory reaches the run directory as it is written (``show --follow`` sees it
run), a re-run after a worker died starts the file again, and the finished file replaces it whole."""

from __future__ import annotations

import json
from pathlib import Path

from coder_eval.executors.dask.live_lines import LiveFiles
from coder_eval.trajectory import read_trajectory
from tests.executors.builders import processes, started_run, wait_for
from tests.helpers import minimal_task

MARK = b"sleep\x007.75"
START = b'{"type":"episode_start","task_hash":"sha256:worker"}\n'


def test_the_episode_file_grows_in_the_run_directory_while_its_agent_runs(tmp_path: Path) -> None:
    minimal_task(
        tmp_path / "tasks",
        "slow",
        "sandbox: {driver: tempdir}\nagent: {kind: command, command: 'sleep 7.75; echo ok > ok.txt'}\n",
    )
    run = tmp_path / "runs" / "r"
    episode = run / "episodes" / "slow--default--r0.jsonl"
    with started_run(
        tmp_path, "tasks", "--executor", "dask", "--run-dir", str(run), "--no-report"
    ) as process:
        wait_for(lambda: bool(processes(MARK)), timeout=120)
        wait_for(lambda: episode.is_file() and b"episode_start" in episode.read_bytes(), timeout=10)
        assert processes(MARK)  # still running: the lines came before the result
        assert read_trajectory(episode).end is None
        _, stderr = process.communicate(timeout=120)

    assert process.returncode == 0, stderr
    finished = read_trajectory(episode)
    assert finished.end is not None and finished.end.outcome == "pass" and not finished.problems
    assert [e.type for e in finished.events].count("episode_start") == 1


def test_a_rerun_starts_the_file_again_and_a_dead_attempt_is_dropped(tmp_path: Path) -> None:
    live, path = LiveFiles(), tmp_path / "e.jsonl"
    live.open("k", path, "sha256:here")

    live.receive((0.0, {"key": "k", "attempt": "a", "lines": START + b'{"type":"message"}\n'}))
    assert json.loads(path.read_bytes().splitlines()[0])["task_hash"] == "sha256:here"
    live.receive((0.0, {"key": "k", "attempt": "b", "lines": START}))  # the worker of "a" died
    live.receive((0.0, {"key": "k", "attempt": "a", "lines": b'{"type":"late"}\n'}))
    live.receive((0.0, {"key": "k", "attempt": "b", "lines": b'{"type":"tool_call"}\n'}))
    assert [json.loads(line)["type"] for line in path.read_bytes().splitlines()] == [
        "episode_start",
        "tool_call",
    ]

    live.close("k")
    path.write_bytes(b"finished\n")  # written whole by the executor
    live.receive((0.0, {"key": "k", "attempt": "b", "lines": b'{"type":"after"}\n'}))
    live.receive((0.0, {"key": "other", "attempt": "c", "lines": START}))
    assert path.read_bytes() == b"finished\n"
    assert not (tmp_path / "other").exists()
