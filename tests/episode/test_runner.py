"""The runner: outcomes, statuses and timings of single episodes, and batches."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_eval.agents.spec import AgentSpecBase
from coder_eval.episode.plan import EpisodePlan, plan_episodes
from coder_eval.episode.runner import run_episode
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.task import TaskSpec, load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeEnd, EpisodeStart, ToolCall, read_trajectory
from tests.helpers import minimal_task, write_task


def run_one(task: TaskSpec, tmp_path: Path, variant: str = "default") -> tuple[EpisodeEnd, list[object]]:
    plan = EpisodePlan(task, variant)
    path = tmp_path / "out" / f"{plan.episode_id}.jsonl"
    end = asyncio.run(run_episode(plan, "run-1", path))
    return end, list(read_trajectory(path).events)


def only(path: Path, overrides: dict[str, object] | None = None) -> TaskSpec:
    (task,) = load_tasks([path], overrides)
    return task


def test_oracle_passes_and_records_its_commands(tmp_path: Path) -> None:
    end, events = run_one(only(minimal_task(tmp_path), {"agent": {"kind": "oracle"}}), tmp_path)
    assert (end.outcome, end.status, end.score) == ("pass", "completed", 1.0)
    start = events[0]
    assert isinstance(start, EpisodeStart)
    assert (start.episode_id, start.task_id, start.run_id) == ("t1--default--r0", "t1", "run-1")
    assert [e.input["command"] for e in events if isinstance(e, ToolCall)] == ["echo ok > ok.txt"]
    assert "reference_solution" not in start.task  # hidden material stays out of the trajectory
    assert end.timings.total_s >= end.timings.agent_s > 0


def test_none_agent_fails(tmp_path: Path) -> None:
    end, events = run_one(only(minimal_task(tmp_path), {"agent": {"kind": "none"}}), tmp_path)
    assert (end.outcome, end.status, end.score) == ("fail", "completed", 0.0)
    (criterion,) = [e for e in events if isinstance(e, CriterionResult)]
    assert criterion.passed is False and criterion.details["error"] == "no file matches 'ok.txt'"


def test_task_timeout_kills_the_agent_and_fails(tmp_path: Path) -> None:
    path = minimal_task(
        tmp_path,
        extra="""
        agent: {kind: command, command: "sleep 30; echo ok > ok.txt"}
        run_limits: {task_timeout: 0.5}
        """,
    )
    end, _ = run_one(only(path), tmp_path)
    assert (end.outcome, end.status) == ("fail", "timeout")
    assert end.timings.agent_s < 5
    assert "task_timeout" in (end.error or "")


def test_a_crashing_agent_command_is_its_own_fail_not_invalid(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="agent: {kind: command, command: 'echo boom >&2; exit 3'}\n")
    end, events = run_one(only(path), tmp_path)
    assert (end.outcome, end.status, end.invalid_cause) == ("fail", "agent_error", None)
    assert "exited 3: boom" in (end.error or "")
    assert [e for e in events if isinstance(e, CriterionResult)]  # graded, for the record


def test_command_agent_gets_the_prompt(tmp_path: Path) -> None:
    path = minimal_task(
        tmp_path, extra="agent: {kind: command, command: 'echo {prompt} > said.txt; echo ok > ok.txt'}\n"
    )
    end, _ = run_one(only(path), tmp_path)
    assert end.outcome == "pass"


def test_gating_grader_crash_makes_the_episode_invalid(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: t
        initial_prompt: p
        agent: {kind: none}
        success_criteria:
          - {type: hidden_tests, command: "true"}
        """,
    )
    end, events = run_one(only(path), tmp_path)
    assert (end.outcome, end.status) == ("invalid", "grader_error")
    (criterion,) = [e for e in events if isinstance(e, CriterionResult)]
    assert criterion.error is not None and "no 'hidden_tests' block" in criterion.error


def test_informational_grader_crash_is_recorded_but_not_fatal(tmp_path: Path) -> None:
    path = minimal_task(
        tmp_path,
        extra="""
        agent: {kind: oracle}
        """,
    )
    task = only(path)
    crashing = load_tasks(
        [
            write_task(
                tmp_path / "x",
                "task_id: x\ninitial_prompt: p\nsuccess_criteria:\n"
                "  - {type: hidden_tests, command: 'true', weight: 0}\n",
            )
        ]
    )[0].success_criteria[0]
    task = task.model_copy(update={"success_criteria": [*task.success_criteria, crashing]})
    end, events = run_one(task, tmp_path)
    assert end.outcome == "pass"
    errors = [e.error for e in events if isinstance(e, CriterionResult) and e.error]
    assert len(errors) == 1


def test_token_budget_marks_budget_exceeded(tmp_path: Path) -> None:
    from coder_eval.agents.base import AgentResult
    from coder_eval.episode.agent_phase import apply_budgets
    from coder_eval.trajectory import Usage

    task = only(minimal_task(tmp_path, extra="run_limits: {max_total_tokens: 100, max_usd: 1.0}\n"))
    tokens = apply_budgets(task.run_limits, AgentResult(usage=Usage(input_tokens=90, output_tokens=20)))
    dollars = apply_budgets(task.run_limits, AgentResult(usage=Usage(input_tokens=1), cost_usd=1.5))
    assert (tokens.status, dollars.status) == ("budget_exceeded", "budget_exceeded")


def test_pre_run_failure_is_an_infra_error(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="agent: {kind: oracle}\npre_run: 'exit 7'\n")
    end, _ = run_one(only(path), tmp_path)
    assert (end.outcome, end.status) == ("invalid", "infra_error")
    assert "pre_run 'exit 7' exited 7" in (end.error or "")


def test_episode_ids_and_seeds_are_deterministic(tmp_path: Path) -> None:
    task = only(minimal_task(tmp_path, "fix_bug.v2"))
    a, b = EpisodePlan(task, "with skill", 2), EpisodePlan(task, "with skill", 2)
    assert a.episode_id == "fix_bug.v2--with-skill--r2"
    assert a.seed == b.seed != EpisodePlan(task, "with skill", 1).seed


def test_batch_runs_every_plan_concurrently_and_counts(tmp_path: Path) -> None:
    tasks = load_tasks(
        [minimal_task(tmp_path / "a", "a"), minimal_task(tmp_path / "b", "b")], {"agent": {"kind": "oracle"}}
    )
    plans = plan_episodes(tasks, repeats=3)
    run = RunDir.create(tmp_path / "runs", RunManifest(run_id="r1"))
    summary = asyncio.run(run_batch(plans, run, run_id="r1", concurrency=4))
    assert summary.outcomes == {"pass": 6, "fail": 0, "invalid": 0}
    assert sorted(p.stem for p in run.trajectory_paths()) == sorted(p.episode_id for p in plans)
    assert (tmp_path / "runs" / "latest").resolve() == run.path.resolve()


class _SlowSpec(AgentSpecBase):
    type: str = "slow-talker"


class _SlowTalker:
    """Says one thing with usage, then hangs until cancelled."""

    async def run(self, request: object, sink: object) -> object:
        from coder_eval.trajectory import Message, Usage

        sink.write(  # type: ignore[attr-defined]
            Message(
                role="assistant", model="claude-sonnet-4-5", usage=Usage(input_tokens=1000, output_tokens=10)
            )
        )
        await asyncio.sleep(60)
        raise AssertionError("not cancelled")


def test_timeout_keeps_the_usage_already_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coder_eval import agents

    monkeypatch.setitem(
        agents.AGENTS, "slow-talker", agents.AgentKind(_SlowSpec, "tests.episode.test_runner:_SlowTalker")
    )
    task = only(minimal_task(tmp_path, extra="run_limits: {task_timeout: 0.3}\n"))
    task = task.model_copy(update={"agent": _SlowSpec()})
    end, _ = run_one(task, tmp_path)
    assert (end.outcome, end.status, end.num_turns) == ("fail", "timeout", 1)
    assert (end.usage.input_tokens, end.usage.output_tokens) == (1000, 10)
    assert end.cost_usd == pytest.approx(1000 * 3e-6 + 10 * 15e-6)


def test_oracle_answer_is_what_its_last_step_printed(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: answer
        initial_prompt: How many pages are there?
        agent: {kind: oracle}
        reference_solution: |
          echo counting >&2

          echo "There are 42 pages."
        success_criteria:
          - {type: message_matches, pattern: "\\\\b42 pages\\\\b"}
        """,
    )
    end, _ = run_one(only(path), tmp_path)
    assert end.outcome == "pass"
