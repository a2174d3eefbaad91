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

__version__ = "0.1.0"

from coder_eval.episode_plan import EpisodePlan, plan_episodes
from coder_eval.errors import CoderEvalError, ExitCode
from coder_eval.run.batch import run_batch
from coder_eval.runner import run_episode
from coder_eval.task import TaskSpec, load_tasks
from coder_eval.trajectory import SCHEMA_VERSION, TrajectoryWriter, read_trajectory

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
