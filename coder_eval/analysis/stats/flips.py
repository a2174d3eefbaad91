"""``flips``: tasks whose pass status differs between two variants, read from a to b.

Example::

    flips(runs.episodes, "baseline", "candidate")   # direction 'pass→fail' is a regression here
"""

from __future__ import annotations

import pandas as pd

from coder_eval.analysis.stats.metrics import check_columns, check_variants, valid_episodes

FLIP_COLUMNS = ["task_id", "pass_rate_a", "pass_rate_b", "n_a", "n_b", "direction", "paths_a", "paths_b"]


def flips(episodes: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Tasks whose pass rate over valid episodes differs between ``a`` and ``b``.

    ``direction`` reads from a to b: ``"pass→fail"`` when a's pass rate is higher, ``"fail→pass"``
    when b's is. Tasks valid in only one variant are left out. Sorted by the size of the change.

    Example: ``flips(runs.episodes, "old", "new").query("direction == 'pass→fail'")``
    """
    check_columns(episodes, ["task_id", "passed", "outcome", "path"])
    check_variants(episodes, a, b)
    valid = valid_episodes(episodes).assign(passed=lambda f: f["passed"].astype(float))
    per = {
        v: valid[valid["variant_id"] == v]
        .groupby("task_id")
        .agg(pass_rate=("passed", "mean"), n=("passed", "size"), paths=("path", list))
        for v in (a, b)
    }
    joined = per[a].add_suffix("_a").join(per[b].add_suffix("_b"), how="inner")
    changed = joined[joined["pass_rate_a"] != joined["pass_rate_b"]].copy()
    changed["direction"] = (changed["pass_rate_a"] > changed["pass_rate_b"]).map(
        {True: "pass→fail", False: "fail→pass"}
    )
    changed["change"] = (changed["pass_rate_a"] - changed["pass_rate_b"]).abs()
    changed = changed.sort_values(["change", "task_id"], ascending=[False, True]).reset_index()
    return changed.reindex(columns=FLIP_COLUMNS)
