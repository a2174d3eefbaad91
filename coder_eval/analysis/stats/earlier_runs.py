"""What earlier runs recorded of the planned tasks: per variant and task, the tokens, cost and wall
time of each finished valid episode, and which runs they came from (``plan``'s forecast reads them
before it imports any statistics: a plan with no earlier run needs none).

Example::

    seen = history(Path("runs"), {"t1", "t2"})
    seen["baseline"].values["cost_usd"]      # {"t1": [0.12, 0.10], "t2": [0.31]}
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from coder_eval.errors import CoderEvalError
from coder_eval.manifest import read_manifest

AMOUNTS = ("total_tokens", "cost_usd", "duration_s")


@dataclass
class Seen:
    """One variant's earlier episodes of the planned tasks: per task, the values of each amount."""

    runs: set[str] = field(default_factory=set)
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def add(self, task_id: str, metric: str, value: float | None) -> None:
        if value is not None:
            self.values.setdefault(metric, {}).setdefault(task_id, []).append(float(value))


def history(folder: Path, task_ids: Collection[str]) -> dict[str, Seen]:
    """Per variant, the finished valid episodes of ``task_ids`` in the runs under ``folder``."""
    from coder_eval.run_dir import RunDir

    seen: dict[str, Seen] = {}
    found = folder.iterdir() if folder.is_dir() else iter(())
    for path in sorted(p for p in found if not p.is_symlink() and (p / "run.json").is_file()):
        try:
            planned = {e.episode_id: e for e in read_manifest(path).episodes}
            ends = RunDir.open(path).finished_episodes()
        except (CoderEvalError, OSError):
            continue
        for episode_id, end in ends.items():
            plan = planned.get(episode_id)
            if plan is None or plan.task_id not in task_ids or end.outcome == "invalid":
                continue
            arm = seen.setdefault(plan.variant_id, Seen())
            arm.runs.add(path.name)
            amounts = (end.usage.total, end.cost_usd, end.timings.total_s)
            for metric, value in zip(AMOUNTS, amounts, strict=True):
                arm.add(plan.task_id, metric, value)
    return seen
