"""Authors' patterns against agent text: matched off the event loop, within a deadline."""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time

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


def test_a_long_match_holds_up_no_other_and_later_matches_reuse_the_workers() -> None:
    async def side_by_side() -> list[str]:
        done: list[str] = []

        def slow() -> None:
            time.sleep(1.0)
            done.append("slow")

        def quick() -> None:
            done.append("quick")

        await asyncio.gather(bounded(slow), asyncio.sleep(0.1), bounded(quick))
        return done

    assert asyncio.run(side_by_side()) == ["quick", "slow"]  # the quick one did not wait for a worker
    workers = {t for t in threading.enumerate() if t.name == "coder_eval-match"}
    assert len(workers) >= 2 and all(t.daemon for t in workers)  # a worker each, kept, idle now

    async def one_after_another() -> list[threading.Thread]:
        return [await bounded(threading.current_thread) for _ in range(20)]

    assert set(asyncio.run(one_after_another())) <= workers  # twenty matches in turn started no thread


def test_a_forked_child_matches_with_workers_of_its_own() -> None:
    asyncio.run(bounded(search, "b", "ab"))  # the parent has a worker
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: none of the parent's threads runs here
        try:
            found = asyncio.run(asyncio.wait_for(bounded(search, "b", "ab"), 5))
            os.write(write, b"ok" if found else b"no")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 2)
    os.waitpid(pid, 0)
    assert answer == b"ok"
