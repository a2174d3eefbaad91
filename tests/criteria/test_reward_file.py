"""``reward_file``: a script's reward file is the score; only what this run writes counts."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from coder_eval.criteria import GradingContext, Verdict
from coder_eval.criteria.reward_file import RewardFile
from coder_eval.errors import GraderError
from coder_eval.sandbox import Provision, TempdirSandbox, TempdirSpec


def grade(criterion: RewardFile, planted: dict[str, str] | None = None) -> Verdict:
    async def go() -> Verdict:
        sandbox = await TempdirSandbox.create(TempdirSpec(), Provision())
        try:
            for name, text in (planted or {}).items():
                await sandbox.write_file(name, text)
            return await criterion.evaluate(GradingContext(sandbox=sandbox, events=[], task_dir=Path.cwd()))
        finally:
            await sandbox.close()

    return asyncio.run(go())


def test_the_number_in_the_reward_file_is_the_score() -> None:
    verdict = grade(
        RewardFile(command="mkdir -p out && echo 0.75 > out/reward.txt", reward_file="out/reward.txt")
    )
    assert verdict.score == 0.75 and verdict.details["rewards"] == {"reward": 0.75}


@pytest.mark.parametrize(
    ("written", "key", "score"),
    [
        ('{"reward": 0.5, "speed": 1}', "reward", 0.5),
        ('{"a": 1, "b": 0}', "reward", 0.5),
        ('{"a": 1, "b": 0}', "b", 0.0),
    ],
)
def test_a_reward_json_wins_with_its_key_else_its_mean(written: str, key: str, score: float) -> None:
    command = f"echo 1 > r.txt && echo '{written}' > r.json"
    verdict = grade(RewardFile(command=command, reward_file="r.txt", reward_json="r.json", reward_key=key))
    assert verdict.score == score and verdict.details["reward_source"] == "r.json"


def test_a_planted_reward_does_not_count_and_no_reward_is_the_graders_failure() -> None:
    with pytest.raises(GraderError, match=r"wrote no reward file \(r\.txt\); it exited 0 without a reward"):
        grade(RewardFile(command="true", reward_file="r.txt"), planted={"r.txt": "1\n"})


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("echo lots > r.txt", "the reward file r.txt does not hold a number: 'lots'"),
        (": > r.txt", "the reward file r.txt is empty"),
        ("echo nan > r.txt", "the reward file r.txt holds 'nan'"),
        ("echo 1 > r.txt; echo '[1]' > r.json", "the reward file r.json is not a flat object of numbers"),
        ("echo 1 > r.txt; echo '{' > r.json", "the reward file r.json is not JSON"),
    ],
)
def test_a_reward_that_cannot_be_scored_is_the_graders_failure_as_harbor_reads_it(
    command: str, problem: str
) -> None:
    """reward.json, when written, is the reward (a broken one is not skipped for reward.txt)."""
    with pytest.raises(GraderError, match=re.escape(problem)):
        grade(RewardFile(command=command, reward_file="r.txt", reward_json="r.json"))


@pytest.mark.parametrize(
    ("command", "why"),
    [("sleep 5; echo 1 > r.txt", "it timed out"), ("kill -9 $$", "it was killed by signal 9")],
)
def test_a_script_the_agents_work_stopped_is_the_agents_failure(command: str, why: str) -> None:
    verdict = grade(RewardFile(command=command, reward_file="r.txt", timeout=0.5))
    assert (verdict.score, verdict.passed) == (0.0, False)
    assert verdict.details["error"] == f"the verifier script wrote no reward file (r.txt): {why}"
