"""A provider outage is never read as the agent's failure: a model that never answers is ``invalid``
however the episode ends (``turn_timeout`` too), and one that stops answering mid-episode is
``model_stalled`` (invalid); an agent's own slow tool stays its ``timeout``; a scripted model has no
price, so its episode costs $0 and no dollar budget stops it. The real Claude Code CLI against the
scripted model server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.test_claude_code import BASH, SLEEP, run, scripted_task
from tests.helpers import scripted_list_price

pytestmark = pytest.mark.slow

TURN_LIMIT = "run_limits: {turn_timeout: 4, task_timeout: 120}\n"


def test_a_model_that_never_answers_is_invalid_when_the_turn_timeout_ends_it(tmp_path: Path) -> None:
    end, _ = run(scripted_task(tmp_path, "- error: {kind: hang}", extra=TURN_LIMIT), tmp_path)
    assert (end.outcome, end.status, end.invalid_cause) == ("invalid", "infra_error", "provider")
    assert end.error == (
        "provider unavailable: the model did not answer once before the turn_timeout of 4 s was reached"
    )


def test_a_model_that_stops_answering_mid_episode_is_model_stalled(tmp_path: Path) -> None:
    turns = f"- blocks: [{BASH.format('echo one')}]\n- error: {{kind: hang}}"
    end, events = run(scripted_task(tmp_path, turns, extra=TURN_LIMIT), tmp_path)
    assert (end.outcome, end.status, end.invalid_cause) == ("invalid", "model_stalled", "provider")
    assert end.error is not None and "the model stopped answering mid-episode" in end.error
    assert any(e.type == "tool_result" and "one" in e.output for e in events)  # it had answered
    assert not any(e.type == "criterion" for e in events)  # not measured, so not graded


def test_the_agents_own_slow_tool_stays_its_timeout(tmp_path: Path) -> None:
    turns = f"- blocks: [{BASH.format(SLEEP)}]"
    end, _ = run(scripted_task(tmp_path, turns, extra=TURN_LIMIT), tmp_path)
    assert (end.outcome, end.status, end.invalid_cause) == ("fail", "timeout", None)


def test_a_scripted_episode_costs_nothing_and_no_dollar_budget_stops_it(tmp_path: Path) -> None:
    turns = f"- blocks: [{BASH.format('echo one')}]\n- blocks: [{{text: done}}]"
    budget = "run_limits: {max_usd: 0.000001, task_timeout: 120}\n"
    end, _ = run(scripted_task(tmp_path, turns, extra=budget), tmp_path)
    assert (end.outcome, end.status, end.cost_usd, end.num_turns) == ("pass", "completed", 0.0, 2)
    priced = scripted_list_price(end.notes)  # what the CLI priced the tokens at, kept in the note
    assert priced is not None and priced > 0.000001, end.notes
