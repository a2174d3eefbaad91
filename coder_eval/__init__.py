"""coder_eval: evaluate AI coding agents on task suites, with honest paired statistics.

Example::

    import asyncio
    from pathlib import Path
    from coder_eval import EpisodePlan, load_tasks, read_trajectory, run_episode

    (task,) = load_tasks([Path("tasks/examples/write_file.yaml")], {"agent": {"kind": "oracle"}})
    end = asyncio.run(run_episode(EpisodePlan(task), "demo", Path("demo.jsonl")))

Analysis lives in ``coder_eval.analysis`` (pandas, scipy), imported separately.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coder_eval import moved
from coder_eval.errors import CoderEvalError, ExitCode
from coder_eval.lazy import lazy_names
from coder_eval.version import __version__

moved.install()  # modules that moved stay importable from their old names, with a warning

if TYPE_CHECKING:
    from coder_eval.episode.plan import EpisodePlan, plan_episodes
    from coder_eval.episode.runner import run_episode
    from coder_eval.run.batch import run_batch
    from coder_eval.task import TaskSpec, load_tasks
    from coder_eval.trajectory import SCHEMA_VERSION, TrajectoryWriter, read_trajectory

LAZY: dict[str, str] = {
    "EpisodePlan": "coder_eval.episode.plan",
    "plan_episodes": "coder_eval.episode.plan",
    "run_batch": "coder_eval.run.batch",
    "run_episode": "coder_eval.episode.runner",
    "TaskSpec": "coder_eval.task",
    "load_tasks": "coder_eval.task",
    "SCHEMA_VERSION": "coder_eval.trajectory",
    "TrajectoryWriter": "coder_eval.trajectory",
    "read_trajectory": "coder_eval.trajectory",
}
"""Names imported from their module on first use, so ``import coder_eval`` (and with it
``coder-eval --version``) does not import the runner, every agent and every criterion."""


if not TYPE_CHECKING:  # for the type checker the names are the imports above, and nothing else
    __getattr__, __dir__ = lazy_names(__name__, globals(), LAZY)


__all__ = [
    "SCHEMA_VERSION",
    "CoderEvalError",
    "EpisodePlan",
    "ExitCode",
    "TaskSpec",
    "TrajectoryWriter",
    "__version__",
    "load_tasks",
    "plan_episodes",
    "read_trajectory",
    "run_batch",
    "run_episode",
]
