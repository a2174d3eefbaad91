"""``reward_file``: a script's reward file is the score; only what this run writes counts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_eval.criteria import GradingContext, Verdict
from coder_eval.criteria.reward_file import RewardFile
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


def test_a_planted_reward_does_not_count() -> None:
    verdict = grade(RewardFile(command="true", reward_file="r.txt"), planted={"r.txt": "1\n"})
    assert (verdict.score, verdict.passed) == (0.0, False)
    assert verdict.details["error"] == "the verifier script wrote no readable reward"


def test_an_unreadable_reward_is_a_failure_with_the_reason() -> None:
    verdict = grade(
        RewardFile(
            command="echo lots > r.txt; echo '[1]' > r.json", reward_file="r.txt", reward_json="r.json"
        )
    )
    assert verdict.passed is False
    assert verdict.details["problems"] == [
        "r.json is not a flat object of numbers",
        "r.txt does not hold a number: 'lots'",
    ]


def test_a_script_that_times_out_says_so() -> None:
    verdict = grade(RewardFile(command="sleep 5; echo 1 > r.txt", reward_file="r.txt", timeout=0.3))
    assert verdict.details["timed_out"] is True and "timed out" in verdict.details["error"]
