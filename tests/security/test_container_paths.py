"""A task whose scripts name container paths (a Harbor task: ``/tests``, ``/solution``, ``/logs``):
while the agent runs, the hidden tests and the reference solution are nowhere it can reach, and what
it plants at those paths never reaches the verifier. Only the oracle is shown the solution, and it
too never sees the tests. A Terminal-Bench task whose Dockerfile copies its whole folder into the
image does not take its tests and solution along."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeEnd, read_trajectory
from tests.interop.task_readers.builders import FIXTURES, with_dockerfiles

from .conftest import ISOLATING

SEARCH = r"""
for path in /tests /solution /logs/verifier; do
  [ -n "$(ls -A "$path" 2>/dev/null)" ] && echo "seen $path: $(ls -A "$path" | tr '\n' ' ')"
done
find / -path /proc -prune -o \( -name test_outputs.py -o -name solve.sh -o -name test.sh \) -print 2>/dev/null \
  | grep -v "^$PWD/" | sed 's/^/found /'
mkdir -p /tests /logs/verifier 2>/dev/null
printf 'def test_ok():\n    pass\n' > /tests/test_outputs.py 2>/dev/null
printf '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n' > /tests/test.sh 2>/dev/null
echo 1 > /logs/verifier/reward.txt 2>/dev/null
echo '{"reward": 1}' > /logs/verifier/reward.json 2>/dev/null
echo searched
"""


def task_dir(driver: str, tmp_path: Path) -> Path:
    """The Python fixture task, in Harbor's layout (with a Dockerfile for docker)."""
    if driver == "docker":
        return with_dockerfiles(tmp_path / "tasks") / "py-word-count"
    return Path(shutil.copytree(FIXTURES / "harbor" / "py-word-count", tmp_path / "py-word-count"))


def episode(task: Path, agent: dict[str, Any]) -> tuple[EpisodeEnd, dict[str, CriterionResult]]:
    (spec,) = load_tasks([task], {"agent": agent})
    path = task.parent / f"{agent['kind']}.jsonl"
    end = asyncio.run(run_episode(EpisodePlan(spec), "red-team", path))
    verdicts = {e.criterion_id: e for e in read_trajectory(path).events if isinstance(e, CriterionResult)}
    return end, verdicts


@pytest.mark.parametrize("driver", ISOLATING)
def test_the_agent_cannot_reach_the_tests_or_the_solution_nor_plant_them(driver: str, tmp_path: Path) -> None:
    end, verdicts = episode(task_dir(driver, tmp_path), {"kind": "command", "command": SEARCH + "\ntrue\n"})

    assert end.final_message == "searched\n", end.final_message  # nothing seen, nothing found
    assert (end.outcome, verdicts["reward"].score) == ("fail", 0.0), end
    assert verdicts["reward"].details["rewards"] == {"reward": 0.0}  # the task's own tests, not the plant


@pytest.mark.parametrize("driver", ISOLATING)
def test_the_oracle_is_shown_the_solution_and_never_the_tests(driver: str, tmp_path: Path) -> None:
    task = task_dir(driver, tmp_path)
    solve = task / "solution" / "solve.sh"
    guard = '#!/bin/bash\nif [ -e /tests ]; then echo "/tests is here"; exit 1; fi\nls /solution\n'
    solve.write_text(guard + solve.read_text().removeprefix("#!/bin/bash\n"))

    end, verdicts = episode(task, {"kind": "oracle"})

    assert (end.outcome, verdicts["reward"].score) == ("pass", 1.0), end


@pytest.mark.docker
@pytest.mark.slow
def test_a_terminal_bench_image_built_from_the_whole_task_folder_holds_no_hidden_material(
    tmp_path: Path,
) -> None:
    task = Path(shutil.copytree(FIXTURES / "terminal_bench" / "py-word-count", tmp_path / "py-word-count"))
    (task / "Dockerfile").write_text("FROM coder-eval/base\nWORKDIR /app\nCOPY . /app/\n")

    end, verdicts = episode(task, {"kind": "command", "command": SEARCH + "\nls -A /app\n"})

    assert end.final_message is not None and end.final_message.startswith("searched\n"), end.final_message
    listed = end.final_message.split()[1:]
    assert "words.txt" in listed and not {"tests", "solution.sh", "run-tests.sh"} & set(listed), listed
    assert (end.outcome, verdicts["reward"].score) == ("fail", 0.0), end
