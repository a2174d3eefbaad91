"""On a dask worker the task's folder, hidden tests included, is a bundle unpacked in the worker's cache:
an agent that hunts for that cache to read or rewrite the hidden tests finds nothing it can reach."""

from __future__ import annotations

import asyncio
import shutil
import textwrap
from pathlib import Path

import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.executors.dask.executor import open_dask
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, read_trajectory

from .conftest import FIXTURES, ISOLATING, TASK, Outcome

HUNTER = r"""
found=$(find / -xdev \( -path '*coder_eval-bundles*' -o -path '*dask-scratch-space*' \) -name 'test_*.py' 2>/dev/null)
for f in $found; do echo 'def test_ok(): pass' > "$f"; done
echo "$found" > found.txt
true
"""


def on_a_worker(folder: Path, driver: str) -> Outcome:
    shutil.copytree(FIXTURES / "calc", folder / "calc")
    shutil.copytree(FIXTURES / "hidden", folder / "hidden")
    (folder / "task.yaml").write_text(TASK.format(driver=driver, calc="calc", hidden="hidden"))
    agent = {"agent": {"kind": "command", "command": textwrap.dedent(HUNTER)}}
    (task,) = load_tasks([folder / "task.yaml"], agent)
    path = folder / "episode.jsonl"

    async def run() -> None:
        async with open_dask(slots=1) as executor:
            await executor.run(EpisodePlan(task), "red-team", path)

    asyncio.run(run())
    events = read_trajectory(path).events
    end = read_trajectory(path).end
    assert end is not None
    return Outcome(end, {e.criterion_id: e for e in events if isinstance(e, CriterionResult)}, path)


@pytest.mark.parametrize("driver", ISOLATING)
def test_an_agent_on_a_worker_cannot_reach_the_bundled_hidden_tests(tmp_path: Path, driver: str) -> None:
    outcome = on_a_worker(tmp_path / "task", driver)
    assert outcome.held(), outcome.summary()
    # the hidden tests graded are the bundled ones, untouched (on tempdir, which is no boundary, the
    # hunter finds the worker's cache and the graders see its one test instead)
    assert outcome.verdicts["hidden"].details["counts"] == {"failed": 2, "passed": 2}, outcome.summary()
