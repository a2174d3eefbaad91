"""``completion_rate``: the share of episodes in which a criterion produced a grade.

An episode counts as completed for a criterion when the agent was measured (the episode is not
``invalid``) and the criterion was graded without a grader error. Invalid episodes count as not
completed here (they are what this rate measures), unlike pass rates, which leave them out.

Example::

    completion_rate(runs.episodes, runs.criteria, "skill")   # per variant: mean, ci_low, ci_high, method
"""

from __future__ import annotations

import pandas as pd

from coder_eval.analysis.stats.metrics import check_columns
from coder_eval.analysis.stats.summary import summarize


def completion_rate(episodes: pd.DataFrame, criteria: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """Per variant: the share of ``episodes`` where ``criterion`` was graded, with its interval
    (``summarize`` of a binary metric: task-clustered, invalid episodes counted as not completed)."""
    check_columns(episodes, ["episode_id", "task_id", "variant_id"])
    check_columns(criteria, ["episode_id", "criterion_id", "error", "outcome"], "criteria")
    graded = criteria[
        (criteria["criterion_id"] == criterion)
        & criteria["error"].isna()
        & (criteria["outcome"] != "invalid")
    ]
    frame = episodes[["episode_id", "task_id", "variant_id"]].assign(
        completed=episodes["episode_id"].isin(graded["episode_id"]), outcome="pass"
    )
    return summarize(frame, metric="completed")
