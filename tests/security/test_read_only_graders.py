"""Attacks on graders that only read files, which are served the workspace snapshot in memory (no
verifier sandbox when the snapshot holds plain files only): links to an answer planted outside the
workspace. (A process the agent leaves writing the answer is the agent writing it: what counts is
the workspace once every such process is dead, which the tests of ``stop`` cover.)"""

from __future__ import annotations

import pytest

from .conftest import EVERY, Attack

pytestmark = pytest.mark.parametrize("driver", EVERY)

ANSWER = """
task_id: answer
initial_prompt: Write the answer to answer.txt.
sandbox: {{driver: {driver}}}
success_criteria:
  - {{id: answer, type: file_contains, path: answer.txt, includes: [forty-two]}}
"""


def graded(attack: Attack, script: str, driver: str) -> tuple[str, bool]:
    outcome = attack(script, driver, task=ANSWER)
    return outcome.end.outcome, outcome.verdicts["answer"].passed


def test_the_honest_answer_passes_and_a_wrong_one_fails(attack: Attack, driver: str) -> None:
    assert graded(attack, "echo forty-two > answer.txt", driver) == ("pass", True)
    assert graded(attack, "echo forty-one > answer.txt", driver) == ("fail", False)


def test_a_link_to_an_answer_planted_outside_the_workspace(attack: Attack, driver: str) -> None:
    script = """
    echo forty-two > "$HOME/answer" && ln -s "$HOME/answer" answer.txt
    mkdir -p "$HOME/dir" && echo forty-two > "$HOME/dir/answer.txt" && ln -s "$HOME/dir" linked
    """

    assert graded(attack, script, driver) == ("fail", False)
