"""Re-grading: a finished run's episodes graded again, no agent run again (``coder-eval regrade``).

- ``run``: ``regrade_run`` (a whole run into a new run directory) and ``plan_regrade`` (its checks).
- ``episode``: one recorded episode re-graded through the runner's verify phase.
- ``tasks``: which definition grades an episode (the task file now, or the recorded task).
- ``verdicts``: which criteria run again, keep their recorded verdict, or cannot be re-graded.
- ``before``: the pre-agent state criteria prepare, rebuilt from the task's templates.
- ``replay``: ``replay_run``, a finished run's endpoint records run again through the real CLI on the
  scripted server, with no key (``coder-eval replay``), compared with the recording.

Example::

    from coder_eval.regrade import regrade_run
    result = asyncio.run(regrade_run(Path("runs/latest"), Path("runs/regraded"), [Path("tasks/demo")]))

See docs/regrade.md.
"""

from coder_eval.regrade.episode import Regraded
from coder_eval.regrade.replay import Replayed, ReplayResult, replay_run
from coder_eval.regrade.run import RegradeResult, plan_regrade, regrade_run

__all__ = [
    "RegradeResult",
    "Regraded",
    "ReplayResult",
    "Replayed",
    "plan_regrade",
    "regrade_run",
    "replay_run",
]
