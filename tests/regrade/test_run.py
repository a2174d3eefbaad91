"""Re-grading whole runs: changed criteria give the expected outcomes with no agent run again, an
unchanged re-grade reproduces every verdict, and what cannot be re-graded is reported."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from coder_eval.analysis import evaluation_cost, load_runs
from coder_eval.errors import InputError, RunLocked, TaskError
from coder_eval.regrade import regrade_run
from coder_eval.run_dir import RunDir
from coder_eval.run_lock import Holder, RunLock
from coder_eval.trajectory import CriterionResult, EpisodeStart, Message, PhaseEvent, ToolCall, ToolResult
from tests.helpers import EXAMPLES, REPO, coder_eval, write_task

from .builders import end_of, greet_task, make_run, regrade, trajectories, verdicts


def test_a_tightened_criterion_fails_and_a_loosened_one_passes_without_running_the_agent(
    tmp_path: Path,
) -> None:
    counter = tmp_path / "agent-runs.txt"
    tasks, now = tmp_path / "tasks", tmp_path / "now"
    greet_task(tasks, "strict-later", counter=counter)
    greet_task(tasks, "lenient-later", counter=counter, writes="ok", includes=["ok", "more"])
    run = make_run(tmp_path / "runs", [tasks])
    before = {k: end_of(t).outcome for k, t in trajectories(run).items()}
    assert before == {"lenient-later--default--r0": "fail", "strict-later--default--r0": "pass"}
    tightened = greet_task(now, "strict-later", counter=counter, includes=["ok", "more"])
    loosened = greet_task(now, "lenient-later", counter=counter, includes=["o"])

    result = regrade(run, tmp_path / "runs" / "after", [tightened, loosened])

    after = trajectories(result.run)
    assert {k: end_of(t).outcome for k, t in after.items()} == {
        "lenient-later--default--r0": "pass",
        "strict-later--default--r0": "fail",
    }
    assert verdicts(after["strict-later--default--r0"])["words"][:2] == (0.5, False)
    assert counter.read_text().splitlines() == ["ran", "ran"]  # the two original runs, nothing since
    assert (result.record.changed, result.record.outcomes_after) == (2, {"pass": 1, "fail": 1})
    start = after["strict-later--default--r0"].start
    assert start is not None and start.regraded_from is not None
    assert (start.regraded_from.criteria, start.regraded_from.task_file) == ("task_file", str(tightened))
    assert start.task["success_criteria"][0]["includes"] == ["ok", "more"]


def test_the_regraded_trajectory_keeps_the_agent_events_and_says_where_it_came_from(tmp_path: Path) -> None:
    greet_task(tmp_path / "tasks", "t", counter=tmp_path / "c")
    run = make_run(tmp_path / "runs", [tmp_path / "tasks"])
    result = regrade(run, tmp_path / "runs" / "again")
    (old,), (new,) = trajectories(run).values(), trajectories(result.run).values()

    agent_kinds = (Message, ToolCall, ToolResult)
    assert [e for e in new.events if isinstance(e, agent_kinds)] == [
        e for e in old.events if isinstance(e, agent_kinds)
    ]
    assert [e.name for e in new.events if isinstance(e, PhaseEvent)] == [
        "setup",
        "agent",
        "stop",
        "verify",
        "end",
    ]
    start = new.start
    assert isinstance(start, EpisodeStart) and isinstance(old.start, EpisodeStart)
    assert (start.run_id, start.seed) == ("again", old.start.seed)
    assert start.regraded_from is not None
    assert (start.regraded_from.run_id, start.regraded_from.outcome, start.regraded_from.criteria) == (
        "source",
        "pass",
        "recorded",
    )
    old_end, new_end = end_of(old), end_of(new)
    assert (new_end.usage, new_end.num_turns, new_end.final_message) == (
        old_end.usage,
        old_end.num_turns,
        old_end.final_message,
    )
    assert new_end.timings.agent_s == old_end.timings.agent_s
    assert new_end.snapshot is not None and new_end.snapshot == old_end.snapshot
    assert (result.run.path / str(new_end.snapshot.file)).is_file()
    manifest = result.run.read_manifest()
    assert manifest.regraded_from is not None and manifest.regraded_from.run_dir == str(run.path)
    assert manifest.status == "completed" and manifest.snapshots is not None and manifest.snapshots.count == 1
    assert load_runs(result.run.path).episodes.run_id.tolist() == ["again"]


@pytest.mark.slow
def test_an_unchanged_regrade_reproduces_every_verdict(tmp_path: Path) -> None:
    """The example suite under the oracle and under the none agent, and the scripted Claude Code
    task: hidden tests, JSON checks, recorded CLIs, protected files, trajectory graders."""
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    for name, args in {
        "oracle": ["examples", "--agent", "oracle"],
        "none": ["examples", "--agent", "none"],
        "claude": ["examples/scripted_fix.yaml"],
    }.items():
        ran = coder_eval("run", *args, "--run-dir", f"runs/{name}", "--no-report", "-j", "2", cwd=tmp_path)
        assert ran.returncode in (0, 1), ran.stderr
        result = regrade(RunDir.open(tmp_path / "runs" / name), tmp_path / "runs" / f"{name}-again")
        old, new = trajectories(tmp_path / "runs" / name), trajectories(result.run)
        assert old.keys() == new.keys() and len(old) >= 1
        for episode in old:
            assert verdicts(new[episode]) == verdicts(old[episode]), episode
            was, now = end_of(old[episode]), end_of(new[episode])
            assert (now.outcome, now.status, now.score) == (was.outcome, was.status, was.score), episode
        assert result.record.changed == 0 and result.record.criteria_not_regraded == 0


def test_without_a_snapshot_workspace_criteria_are_kept_or_reported_never_guessed(tmp_path: Path) -> None:
    counter = tmp_path / "c"
    greet_task(tmp_path / "tasks", "t", counter=counter)
    run = make_run(tmp_path / "runs", [tmp_path / "tasks"], snapshot_max_bytes=None)
    assert not (run.path / "snapshots").exists()

    same = regrade(run, tmp_path / "runs" / "same")
    (episode,) = trajectories(same.run).values()
    assert end_of(episode).outcome == "pass" and same.record.criteria_kept == 1
    assert any("kept as recorded" in note and "words" in note for note in end_of(episode).notes)

    changed_file = greet_task(
        tmp_path / "now", "t", counter=counter, includes=["ok", "more"], pattern="printf"
    )
    changed = regrade(run, tmp_path / "runs" / "changed", [changed_file])
    (episode,) = trajectories(changed.run).values()
    found = verdicts(episode)
    assert found["words"][2] is not None and "no workspace snapshot" in found["words"][2]
    assert found["wrote-it"] == (0.0, False, None)  # the trajectory criterion was graded again
    assert (end_of(episode).outcome, end_of(episode).status) == ("invalid", "grader_error")
    assert changed.record.criteria_not_regraded == 1


def test_a_snapshot_over_the_cap_is_noted_and_its_workspace_criteria_are_not_regraded(tmp_path: Path) -> None:
    task = write_task(
        tmp_path,
        """
        task_id: noisy
        initial_prompt: make noise
        reference_solution: head -c 200000 /dev/urandom > noise.bin
        success_criteria: [{type: file_exists, path: noise.bin}]
        """,
    )
    ran = coder_eval(
        "run",
        str(task),
        "--agent",
        "oracle",
        "--run-dir",
        "runs/r",
        "--no-report",
        "--snapshot-max-mb",
        "0.05",
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    manifest = json.loads((tmp_path / "runs/r/run.json").read_text())
    assert manifest["snapshots"] == {"kept": True, "max_mb": 0.05, "count": 0, "bytes": 0}
    (episode,) = trajectories(tmp_path / "runs/r").values()
    assert any("passed the 0.05 MB cap" in note for note in end_of(episode).notes)
    task.write_text(task.read_text().replace("noise.bin}", "noise.bin, description: still there}"))
    result = regrade(RunDir.open(tmp_path / "runs/r"), tmp_path / "runs/again", [task])
    assert result.record.criteria_not_regraded == 1
    (episode,) = trajectories(result.run).values()
    assert "passed the 0.05 MB cap" in (verdicts(episode)["0-file_exists"][2] or "")


def test_model_judges_run_again_and_their_cost_is_evaluation_cost(tmp_path: Path) -> None:
    run = make_run(tmp_path / "runs", [REPO / "tasks" / "judges" / "llm_judge.yaml"])
    result = regrade(run, tmp_path / "runs" / "again")
    (episode,) = trajectories(result.run).values()
    (judge,) = [e for e in episode.events if isinstance(e, CriterionResult)]
    assert judge.passed and len(judge.details["votes"]) == 3
    costs = evaluation_cost(load_runs(result.run.path).criteria)
    assert costs.n_votes.sum() == 3 and costs.cost_usd.sum() > 0  # the scripted judge's model is priced
    assert result.record.evaluation_cost_usd == pytest.approx(costs.cost_usd.sum())
    assert json.loads((result.run.path / "run.json").read_text())["regraded_from"]["evaluation_cost_usd"] > 0


def test_episodes_whose_agent_was_not_measured_or_never_ended_are_copied_not_graded(tmp_path: Path) -> None:
    greet_task(tmp_path / "tasks", "ok", counter=tmp_path / "c")
    write_task(
        tmp_path / "tasks",
        """
        task_id: crashes
        initial_prompt: p
        agent: {kind: oracle}
        pre_run: "exit 3"
        success_criteria: [{type: file_exists, path: x}]
        """,
        "crashes.yaml",
    )
    run = make_run(tmp_path / "runs", [tmp_path / "tasks"], overrides={})
    crashed = end_of(trajectories(run)["crashes--default--r0"])
    assert crashed.outcome == "invalid"
    cut = run.episode_path("ok--default--r0")
    cut.write_text("".join(cut.read_text().splitlines(keepends=True)[:-1]))  # a crash before episode_end

    result = regrade(run, tmp_path / "runs" / "again")
    after = trajectories(result.run)
    copied = end_of(after["crashes--default--r0"])
    assert (copied.outcome, copied.status, copied.error) == ("invalid", crashed.status, crashed.error)
    assert "not re-graded: the agent was not measured" in copied.notes[-1]
    interrupted = end_of(after["ok--default--r0"])
    assert (interrupted.outcome, interrupted.status) == ("invalid", "interrupted")
    assert verdicts(after["ok--default--r0"]) == {}


def test_a_grader_error_is_graded_again_once_the_criterion_is_fixed(tmp_path: Path) -> None:
    broken = write_task(
        tmp_path / "tasks",
        """
        task_id: g
        initial_prompt: p
        reference_solution: echo ok > ok.txt
        success_criteria: [{id: tests, type: hidden_tests, command: pytest -q hidden_tests}]
        """,
    )
    run = make_run(tmp_path / "runs", [broken])
    was = end_of(next(iter(trajectories(run).values())))
    assert (was.outcome, was.status, was.agent_status) == ("invalid", "grader_error", "completed")
    fixed = write_task(
        tmp_path / "now",
        """
        task_id: g
        initial_prompt: p
        success_criteria: [{id: tests, type: file_contains, path: ok.txt, includes: [ok]}]
        """,
    )
    result = regrade(run, tmp_path / "runs" / "fixed", [fixed])
    now = end_of(next(iter(trajectories(result.run).values())))
    assert (now.outcome, now.status, now.error) == ("pass", "completed", None)


def test_prepared_state_is_rebuilt_from_the_task_as_it_was_before_the_agent(tmp_path: Path) -> None:
    task = write_task(
        tmp_path / "tasks",
        """
        task_id: keep-tests
        initial_prompt: p
        sandbox:
          template_sources: [{type: starter_files, files: [{path: test_app.py, content: "assert True\\n"}]}]
        reference_solution: echo "assert 1" >> test_app.py
        success_criteria: [{id: untouched, type: file_unchanged, paths: [test_app.py]}]
        """,
    )
    run = make_run(tmp_path / "runs", [task])
    result = regrade(run, tmp_path / "runs" / "again")
    old, new = next(iter(trajectories(run).values())), next(iter(trajectories(result.run).values()))
    assert verdicts(new) == verdicts(old) and verdicts(new)["untouched"][1] is False


def test_bad_input_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    greet_task(tmp_path / "tasks", "t", counter=tmp_path / "c")
    run = make_run(tmp_path / "runs", [tmp_path / "tasks"])
    with pytest.raises(InputError, match="already exists"):
        regrade(run, run.path)
    bad = write_task(tmp_path / "bad", "task_id: t\ninitial_prompt: p\nsuccess_criteria: [{type: nope}]\n")
    with pytest.raises(TaskError, match=r"task.yaml:3: success_criteria\[0\]: unknown type"):
        regrade(run, tmp_path / "runs" / "x", [bad])
    shim = write_task(
        tmp_path / "shim",
        "task_id: t\ninitial_prompt: p\nsandbox: {record_cli: [{tool: gh}]}\n"
        "success_criteria: [{type: recorded_calls, shim: gh, min_calls: 1}]\n",
    )
    with pytest.raises(TaskError, match="do not fit the task the episode ran"):
        regrade(run, tmp_path / "runs" / "y", [shim])
    with pytest.raises(InputError, match="not a run directory"):
        regrade(RunDir(tmp_path / "tasks"), tmp_path / "runs" / "z")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["latest", "source"]


def test_the_regraded_run_is_locked_while_it_is_written_and_free_after(tmp_path: Path) -> None:
    greet_task(tmp_path / "tasks", "t", counter=tmp_path / "c")
    run = make_run(tmp_path / "runs", [tmp_path / "tasks"])
    target = tmp_path / "runs" / "again"
    holders: list[Holder | None] = []

    def seen(_: object) -> None:
        holders.append(RunLock.holder(target))
        with pytest.raises(RunLocked):  # a second writer (say a --resume of it) is refused meanwhile
            RunDir.open(target, lock=True)

    asyncio.run(regrade_run(run.path, target, on_done=seen))

    assert [h.pid if h else None for h in holders] == [os.getpid()]
    assert RunLock.holder(target) is None


def test_a_kept_workspace_past_todays_bounds_is_the_agents_failure_when_regraded(tmp_path: Path) -> None:
    deep = write_task(
        tmp_path / "tasks",
        """
        task_id: deep
        initial_prompt: p
        sandbox: {driver: tempdir, limits: {max_workspace_depth: null}}
        reference_solution: mkdir -p $(printf 'd/%.0s' $(seq 300)) && echo ok > ok.txt
        success_criteria: [{id: ok, type: run_command, command: "test -f ok.txt"}]
        """,
    )
    run = make_run(tmp_path / "runs", [deep])
    (path,) = run.trajectory_paths()
    assert end_of(trajectories(run)[path.stem]).outcome == "pass"
    lines = path.read_text().splitlines()
    start = json.loads(lines[0])  # recorded before the bound existed: the default applies now
    del start["task"]["sandbox"]["limits"]["max_workspace_depth"]
    path.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")

    result = regrade(run, tmp_path / "runs" / "again")

    now = end_of(trajectories(result.run)[path.stem])
    assert (now.outcome, now.status, now.invalid_cause) == ("fail", "resource_limit", None)
    assert "deeper than 256 levels" in (now.error or "")
