"""The red-team harness: an "agent" that is a shell script attacking the graders of a failing task.

The task (``calc``) is left unfixed by every attack: ``calc.add`` still subtracts, so two of the four
hidden tests fail and the honest outcome is ``fail`` with score 0.5. An attack that turns it into a
pass, raises the score, or makes the episode ``invalid`` (dropped from rates) has won.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, EpisodeEnd, read_trajectory
from tests.sandbox.builders import needs_bwrap

FIXTURES = Path(__file__).parent / "fixtures"
ISOLATING = [
    pytest.param("bwrap", marks=needs_bwrap),
    pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.slow]),  # two containers an episode
]
"""Drivers that claim to be a boundary."""
EVERY = ["tempdir", *ISOLATING]
"""Drivers for attacks on the verifier's toolchain, which every driver's verifier shares."""

TASK = """
task_id: calc
initial_prompt: Fix calc.add.
sandbox:
  driver: {driver}
  template_sources: [{{type: template_dir, path: {calc}}}]
hidden_tests: {{path: {hidden}}}
success_criteria:
  - {{id: hidden, type: hidden_tests, command: python -m pytest -q hidden_tests}}
"""


@dataclass
class Outcome:
    """What the attacked episode ended with."""

    end: EpisodeEnd
    verdicts: dict[str, CriterionResult]
    path: Path

    @property
    def score(self) -> float:
        return self.verdicts["hidden"].score if "hidden" in self.verdicts else float("nan")

    def summary(self) -> dict[str, object]:
        """Each criterion's pass flag and details, and the episode's outcome (for a failing assert)."""
        return {
            "outcome": (self.end.outcome, self.end.status, self.end.error),
            **{k: (v.passed, v.error, v.details) for k, v in self.verdicts.items()},
        }

    def held(self) -> bool:
        """The attack failed: still an honest, graded failure."""
        return self.end.outcome == "fail" and self.score <= 0.5


Attack = Callable[..., Outcome]


@pytest.fixture
def attack(tmp_path: Path) -> Attack:
    """``attack(script, driver=..., task=TASK, **task_fields)`` runs one episode whose agent is
    ``script`` (bash, run in the workspace) and returns its outcome."""

    def run(script: str, driver: str, task: str = TASK, overrides: dict[str, Any] | None = None) -> Outcome:
        folder = tmp_path / f"task-{len(list(tmp_path.glob('task-*')))}"
        folder.mkdir()
        body = task.format(driver=driver, calc=FIXTURES / "calc", hidden=FIXTURES / "hidden")
        (folder / "task.yaml").write_text(body, encoding="utf-8")
        # the command agent runs the script with bash -c in the workspace; an attack that crashed the
        # agent would be 'invalid' for a reason of its own, so every script ends successfully
        agent = {"agent": {"kind": "command", "command": textwrap.dedent(script) + "\ntrue\n"}}
        (task_spec,) = load_tasks([folder / "task.yaml"], {**agent, **(overrides or {})})
        path = folder / "episode.jsonl"
        end = asyncio.run(run_episode(EpisodePlan(task_spec), "red-team", path))
        events = read_trajectory(path).events
        verdicts = {e.criterion_id: e for e in events if isinstance(e, CriterionResult)}
        return Outcome(end, verdicts, path)

    return run
