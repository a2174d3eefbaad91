import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

from coder_eval.analysis import load_runs
from coder_eval.analysis.frames.columns import CRITERIA, EPISODES, MESSAGES, TOOL_CALLS, names
from coder_eval.errors import AnalysisError, TrajectoryError
from tests.analysis.builders import write_episode, write_suite


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_suite(tmp_path, {"a": {"t1": ["pass", "fail"], "t2": ["invalid"]}, "b": {"t1": ["pass"]}})


def test_frames_have_the_declared_columns(run: Path) -> None:
    runs = load_runs(run)
    assert list(runs.episodes.columns) == names(EPISODES)
    assert list(runs.criteria.columns) == names(CRITERIA)
    assert list(runs.tool_calls.columns) == names(TOOL_CALLS)
    assert list(runs.messages.columns) == names(MESSAGES)
    assert len(runs.episodes) == 4 and len(runs.criteria) == 4 and len(runs.messages) == 8


def test_episode_row_carries_outcome_tokens_and_prompt(run: Path) -> None:
    ep = load_runs(run).episodes.set_index("episode_id")
    assert bool(ep.loc["t1--a--r0", "passed"]) and not bool(ep.loc["t1--a--r1", "passed"])
    assert ep.loc["t2--a--r0", "outcome"] == "invalid"
    assert ep.loc["t1--a--r0", "total_tokens"] == 1010
    assert ep.loc["t1--a--r0", "prompt"] == "do t1"
    assert ep.loc["t1--a--r0", "model"] == "claude-x"
    assert ep.loc["t1--a--r0", "n_tool_calls"] == 1


def test_the_task_folder_is_the_recorded_task_files_folder(tmp_path: Path) -> None:
    path = write_episode(tmp_path, "t1", "a")
    start, rest = path.read_text().split("\n", 1)
    record = json.loads(start)
    record["task"]["source_path"] = "/suite/tasks/core/t1.yaml"
    path.write_text(json.dumps(record) + "\n" + rest)
    write_episode(tmp_path, "t2", "a")  # recorded without its task file

    folders = load_runs(tmp_path / "run1").episodes.set_index("task_id").task_folder
    assert folders["t1"] == "/suite/tasks/core" and pd.isna(folders["t2"])


def test_invalid_episode_has_missing_passed(run: Path) -> None:
    ep = load_runs(run).episodes.set_index("episode_id")
    assert ep["passed"].isna()["t2--a--r0"]
    assert not ep["passed"].isna()["t1--a--r1"]


def test_tool_call_is_joined_to_its_result(run: Path) -> None:
    call = load_runs(run).tool_calls.iloc[0]
    assert (call["name"], call["input_summary"], call["duration_s"], bool(call["is_error"])) == (
        "Bash",
        "ls",
        0.5,
        False,
    )


def test_latest_symlink_single_file_and_lists_load_each_file_once(run: Path) -> None:
    one = run / "episodes" / "t1--a--r0.jsonl"
    assert len(load_runs(run.parent / "latest").episodes) == 4
    assert len(load_runs(one).episodes) == 1
    assert len(load_runs([run, [one]]).episodes) == 4


def test_truncated_file_is_an_interrupted_invalid_episode_with_a_warning(tmp_path: Path) -> None:
    path = write_episode(tmp_path, "t1", "a")
    path.write_text(path.read_text()[:-25])
    with pytest.warns(UserWarning, match="interrupted"):
        ep = load_runs(path).episodes.iloc[0]
    assert (ep["outcome"], ep["status"], ep["task_id"]) == ("invalid", "interrupted", "t1")
    assert "line 7: unreadable (JSONDecodeError at byte " in ep["error"]


def test_file_without_episode_end_is_interrupted(tmp_path: Path) -> None:
    path = write_episode(tmp_path, "t1", "a", end=False)
    with pytest.warns(UserWarning, match="incomplete"):
        ep = load_runs(path).episodes.iloc[0]
    assert (ep["outcome"], ep["status"]) == ("invalid", "interrupted")


def test_empty_file_is_kept_with_ids_from_its_name(tmp_path: Path) -> None:
    path = tmp_path / "r" / "episodes" / "t9--v--r2.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("")
    with pytest.warns(UserWarning):
        ep = load_runs(path).episodes.iloc[0]
    assert (ep["run_id"], ep["task_id"], ep["variant_id"], ep["repeat"]) == ("r", "t9", "v", 2)


def test_other_schema_version_is_a_trajectory_error(tmp_path: Path) -> None:
    path = write_episode(tmp_path, "t1", "a")
    lines = path.read_text().splitlines()
    first = json.loads(lines[0]) | {"schema_version": 99}
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(TrajectoryError, match="schema_version 99"):
        load_runs(path)


def test_duplicate_episode_ids_keep_one_and_warn(tmp_path: Path) -> None:
    path = write_episode(tmp_path, "t1", "a")
    copy = tmp_path / "copy.jsonl"
    copy.write_text(path.read_text())
    with pytest.warns(UserWarning, match="duplicate"):
        runs = load_runs(path, copy)
    assert len(runs.episodes) == 1 and len(runs.tool_calls) == 1


def test_clean_run_loads_without_warnings(run: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_runs(run)


def test_missing_path_is_an_analysis_error(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError, match="no such run directory"):
        load_runs(tmp_path / "nope")
    with pytest.raises(AnalysisError, match="at least one path"):
        load_runs()


def test_the_record_check_reaches_the_frames(tmp_path: Path) -> None:
    from coder_eval.trajectory import (
        EpisodeEnd,
        EpisodeStart,
        ModelCall,
        RecordCheck,
        ToolCall,
        TrajectoryWriter,
    )

    with TrajectoryWriter(tmp_path / "t--base--r0.jsonl") as sink:
        sink.write(EpisodeStart(run_id="r", episode_id="t--base--r0", task_id="t", variant_id="base", seed=1))
        sink.write(ToolCall(id="real", name="Bash", input={"command": "pytest"}))
        sink.write(ToolCall(id="forged", name="Bash", input={"command": "pytest"}))
        sink.write(ModelCall(seq=0, source="scripted", status=200, content=[{"type": "text", "text": "hi"}]))
        record = RecordCheck(source="scripted", confined=True, unverified_count=2, unverified_ids=["forged"])
        sink.write(EpisodeEnd(outcome="fail", status="agent_error", record=record))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the endpoint's record is a trajectory's own event, not damage
        runs = load_runs(tmp_path)
    episode = runs.episodes.iloc[0]
    assert (episode.record_source, episode.record_verified, episode.n_unverified) == ("scripted", True, 2)
    assert list(runs.tool_calls.verified) == [True, False]
    old = load_runs(run_dir_of_an_older_writer(tmp_path)).episodes.iloc[0]
    assert old.record_source != old.record_source and old.n_unverified != old.n_unverified  # NaN: none


def run_dir_of_an_older_writer(tmp_path: Path) -> Path:
    """A trajectory written before the record existed (no ``record`` in its end)."""
    return write_episode(tmp_path / "older", "t", "base", outcome="pass")
