"""Authors' patterns against agent text: matched off the event loop, within a deadline."""

from __future__ import annotations

import asyncio
import re

import pytest

from coder_eval.errors import PatternTimeout
from coder_eval.patterns import bounded, search
from tests.criteria.builders import Transcript, context, criterion

BACKTRACKS = r"^(a|aa)+$"
TEXT = "a" * 64 + "b"


def test_a_pattern_matches_as_re_does() -> None:
    found = search(r"total: (?P<n>\d+)", "x\ntotal: 42\n", re.MULTILINE)

    assert found is not None and found.group("n") == "42"
    assert search(r"^b", "a\nb") is None


def test_catastrophic_backtracking_runs_out_of_time_while_the_loop_goes_on() -> None:
    async def race() -> tuple[int, str]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.05)

        ticker = asyncio.create_task(tick())
        try:
            await bounded(search, BACKTRACKS, TEXT)
        except PatternTimeout as exc:
            return ticks, str(exc)
        finally:
            ticker.cancel()
        return ticks, "matched"

    ticks, error = asyncio.run(race())

    assert "took longer than" in error
    assert ticks > 10  # the event loop kept running while the pattern was matched


def test_a_criterion_whose_pattern_times_out_raises_the_agents_failure() -> None:
    spec = criterion({"type": "message_matches", "pattern": BACKTRACKS})

    with pytest.raises(PatternTimeout):
        asyncio.run(spec.evaluate(context(Transcript().say(TEXT).events)))


def test_a_pattern_the_matcher_cannot_read_fails_at_load_time() -> None:
    with pytest.raises(ValueError, match="invalid regex"):
        criterion({"type": "message_matches", "pattern": "(unclosed"})
