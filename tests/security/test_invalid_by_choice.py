"""The headline attack, measured: an arm that kills its own agent whenever it would fail, against a
baseline of equal skill, must not be called better by the analysis library's own ``compare``.

Each arm solves each task with probability 1/2 (independent, seeded draws); the killing arm's agent
ends itself (``kill -9``) when its answer is wrong. Were a crash ``invalid``, its failures would leave
its pass rate and it would look about 50 points better; as the agent's own ``fail`` the arms are equal.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from coder_eval.analysis import compare, load_runs
from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks

pytestmark = pytest.mark.slow

TASKS = 30
SEED = 20261206
TASK = """
task_id: answer-{index}
initial_prompt: Write the answer to answer.txt.
sandbox: {{driver: tempdir}}
success_criteria:
  - {{type: file_contains, path: answer.txt, includes: ["42"]}}
"""
ARMS = {
    "baseline": "echo {answer} > answer.txt",
    "kills-itself": "echo {answer} > answer.txt; [ {answer} = 42 ] || kill -9 $$",
}


def run_arms(folder: Path) -> list[Path]:
    rng = random.Random(SEED)
    plans = []
    for index in range(TASKS):
        path = folder / f"task-{index}.yaml"
        path.write_text(TASK.format(index=index), encoding="utf-8")
        for arm, command in ARMS.items():
            answer = 42 if rng.random() < 0.5 else 0
            agent = {"agent": {"kind": "command", "command": command.format(answer=answer)}}
            (task,) = load_tasks([path], agent)
            plans.append(EpisodePlan(task, variant_id=arm))

    async def all_of() -> list[Path]:
        out = []
        for plan in plans:
            trajectory = folder / "episodes" / f"{plan.episode_id}.jsonl"
            await run_episode(plan, "invalid-by-choice", trajectory)
            out.append(trajectory)
        return out

    return asyncio.run(all_of())


def test_an_agent_that_kills_itself_when_it_would_fail_is_not_called_better(tmp_path: Path) -> None:
    episodes = load_runs(run_arms(tmp_path)).episodes

    result = compare(episodes, "kills-itself", "baseline")

    assert result.verdict != "a_better", result
    assert result.ci_low <= 0 <= result.ci_high
    assert result.n_tasks == TASKS and result.n_invalid_excluded == 0
    killed = episodes[episodes.variant_id == "kills-itself"]
    assert set(killed[killed.outcome != "pass"].status) == {"agent_error"}
