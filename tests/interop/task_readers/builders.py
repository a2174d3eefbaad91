"""Running the Terminal-Bench-style fixture tasks (``fixtures/``) and reading what each episode ended with.

Example::

    run_dir = run_tasks(FIXTURES / "harbor", "oracle", tmp_path)
    outcomes(run_dir)["coder-eval.py-word-count"].outcome      # "pass"
    with_dockerfiles(tmp_path / "tasks")                        # the same tasks with a Dockerfile each
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import NamedTuple

from coder_eval.trajectory import PhaseEvent, read_trajectory
from tests.helpers import coder_eval

FIXTURES = Path(__file__).parent / "fixtures"
DOCKERFILE = "FROM coder-eval/base\nWORKDIR /app\nCOPY . /app/\nRUN rm /app/Dockerfile\n"
"""An environment/Dockerfile putting a Harbor fixture's environment files where its WORKDIR is."""


class Ended(NamedTuple):
    """How one episode ended, and on which driver its agent ran."""

    outcome: str
    status: str
    error: str
    invalid_cause: str | None
    driver: str


def run_tasks(tasks: Path, agent: str, tmp_path: Path, *extra: str) -> Path:
    """``coder-eval run TASKS --agent AGENT`` in ``tmp_path``; the run directory."""
    run_dir = tmp_path / "runs" / f"{tasks.name}-{agent}"
    done = coder_eval(
        "run", str(tasks), "--agent", agent, "--run-dir", str(run_dir), "--no-report", "-j", "2", *extra,
        cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return run_dir


def outcomes(run_dir: Path) -> dict[str, Ended]:
    """Task id -> how its episode ended."""
    found = {}
    for path in sorted((run_dir / "episodes").glob("*.jsonl")):
        trajectory = read_trajectory(path)
        end, start = trajectory.end, trajectory.start
        assert end is not None and start is not None, path
        phases = [e for e in trajectory.events if isinstance(e, PhaseEvent) and e.name == "agent"]
        driver = str(phases[0].details.get("driver")) if phases else "?"
        found[start.task_id] = Ended(end.outcome, end.status, end.error or "", end.invalid_cause, driver)
    return found


def with_dockerfiles(target: Path) -> Path:
    """A copy of the Harbor-layout fixtures at ``target`` whose environments are a Dockerfile each
    (so they run on the docker driver)."""
    shutil.copytree(FIXTURES / "harbor", target)
    for task in target.iterdir():
        environment = task / "environment"
        environment.mkdir(exist_ok=True)
        (environment / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    return target
