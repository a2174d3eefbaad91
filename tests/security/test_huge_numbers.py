"""Numbers the agent writes where a grader compares them: an integer of 400 digits (no double holds
it, so converting it raises ``OverflowError``), a count of 5,000 digits (past Python's int-string
limit) in a test summary. Each must be that criterion's failure, graded with a reason, never a crash
of the grader. A verifier that copies such a number into its reward file wrote no reward it can be
scored by: as Harbor counts it, the verifier failed (``invalid``, ``grader_error``, with the reason),
which the comparisons' worst-case bound keeps from moving any verdict."""

from __future__ import annotations

import pytest

from .conftest import EVERY, Attack

pytestmark = pytest.mark.parametrize("driver", EVERY)

COUNTS = """
task_id: counts
initial_prompt: Write summary.json, out.json and run_checks.sh.
sandbox: {{driver: {driver}}}
hidden_tests: {{path: {hidden}}}
success_criteria:
  - id: bounded
    type: json_check
    path: summary.json
    assertions: [{{expression: total, at_least: 3}}, {{expression: total, at_most: 10}}]
  - {{id: half, type: json_check, path: summary.json, schema: {{properties: {{total: {{multipleOf: 0.5}}}}}}}}
  - {{id: checks, type: hidden_tests, command: bash run_checks.sh}}
"""

HUGE = """
python3 -c 'print("{\\"total\\": 1" + "0" * 400 + "}")' > summary.json
python3 -c 'print("{\\"reward\\": 1" + "0" * 400 + "}")' > out.json
python3 -c 'print("echo " + "9" * 5000 + " passed; exit 1")' > run_checks.sh
"""


def test_numbers_past_what_the_graders_convert_fail_their_criteria(attack: Attack, driver: str) -> None:
    outcome = attack(HUGE, driver, COUNTS)

    assert (outcome.end.outcome, outcome.end.status) == ("fail", "completed"), outcome.summary()
    assert all(v.error is None and not v.passed for v in outcome.verdicts.values()), outcome.summary()
    bounded = outcome.verdicts["bounded"].details
    assert bounded["failed"] == ["total gte 3", "total lte 10"]
    assert set(bounded["problems"].values()) == {
        "total: a 401-digit integer, past the range of a JSON number; not compared"
    }
    assert "past the range of a JSON number" in outcome.verdicts["half"].details["schema_errors"][0]
    assert outcome.verdicts["checks"].score == 0.0


REWARD = """
task_id: reward
initial_prompt: Write out.json.
sandbox: {{driver: {driver}}}
success_criteria:
  - {{id: reward, type: reward_file, command: "cat out.json > rewards.json", reward_json: rewards.json}}
"""


def test_a_reward_no_double_holds_is_no_reward_and_never_a_pass(attack: Attack, driver: str) -> None:
    outcome = attack(HUGE, driver, REWARD)

    assert (outcome.end.outcome, outcome.end.status) == ("invalid", "grader_error"), outcome.summary()
    assert outcome.end.error is not None
    assert "the reward file rewards.json is not a flat object of numbers" in outcome.end.error
