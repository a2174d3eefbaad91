"""pass@k (Chen et al. 2021, unbiased) and pass^k (tau-bench), per task then averaged over tasks.

Example::

    pass_at_k(10, 3, 5)      # 0.9166...
    pass_hat_k(10, 3, 2)     # 0.0666...
    pass_at_k_table(runs.episodes, ks=[1, 3])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from coder_eval.analysis.stats.estimate import wilson_effective
from coder_eval.analysis.stats.intervals import NAN, Interval, no_spread, t_interval
from coder_eval.analysis.stats.metrics import check_columns, renumbered, task_means, valid_episodes
from coder_eval.errors import AnalysisError

PASSK_COLUMNS = [
    "variant_id",
    "k",
    "measure",
    "n_tasks",
    "n_tasks_excluded",
    "n_min",
    "n_max",
    "mean",
    "ci_low",
    "ci_high",
    "method",
]


def check_nck(n: int, c: int, k: int) -> None:
    """Raise AnalysisError unless 1 <= k <= n and 0 <= c <= n."""
    if not (k >= 1 and n >= k and 0 <= c <= n):
        raise AnalysisError(f"pass@k needs 1 <= k <= n and 0 <= c <= n (got n={n}, c={c}, k={k})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task: P(at least one of k attempts passes), from n attempts, c passes.

    ``1 − Π_{i=n−c+1}^{n} (1 − k/i)``, and 1 when n − c < k. Example: ``pass_at_k(5, 1, 1)`` -> ``0.2``
    """
    check_nck(n, c, k)
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one task: P(all k attempts pass) = C(c, k) / C(n, k); 0 when c < k.

    Example: ``pass_hat_k(4, 2, 2)`` -> ``0.1666...``
    """
    check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


MEASURES: dict[str, Callable[[int, int, int], float]] = {"pass@k": pass_at_k, "pass^k": pass_hat_k}


def pass_at_k_table(episodes: pd.DataFrame, ks: Sequence[int], confidence: float = 0.95) -> pd.DataFrame:
    """Per variant, k and measure (pass@k, pass^k): mean over tasks with a t interval over tasks.

    Tasks with fewer than k valid attempts are excluded and counted (``n_tasks_excluded``);
    ``n_min``/``n_max`` are the attempts per task behind each k. When every task has the same value
    (all pass, say) the t interval would have no width: Wilson over tasks is used and named. Example::

        pass_at_k_table(runs.episodes, ks=[1, 5])
    """
    episodes = renumbered(episodes)
    check_columns(episodes, ["variant_id", "task_id", "passed", "outcome"])
    if not ks or any(k < 1 for k in ks):
        raise AnalysisError(f"ks must be positive integers (got {list(ks)})")
    counts = task_means(valid_episodes(episodes), "passed")
    counts["c"] = (counts["mean"] * counts["n"]).round().astype(int)
    rows = []
    for variant, part in counts.groupby("variant_id", sort=True):
        for k in ks:
            usable = part[part["n"] >= k]
            for measure, func in MEASURES.items():
                values = np.array([func(n, c, k) for n, c in zip(usable["n"], usable["c"], strict=True)])
                (low, high), method = per_task_interval(values, confidence)
                rows.append(
                    (
                        variant,
                        k,
                        measure,
                        len(usable),
                        len(part) - len(usable),
                        usable["n"].min(),
                        usable["n"].max(),
                        float(values.mean()) if len(values) else float("nan"),
                        low,
                        high,
                        method,
                    )
                )
    return pd.DataFrame(rows, columns=PASSK_COLUMNS)


def per_task_interval(values: np.ndarray, confidence: float) -> tuple[Interval, str]:
    """t over per-task values clipped to [0, 1]; Wilson over tasks when they are all equal."""
    if len(values) == 0:
        return Interval(NAN, NAN), "no task with enough attempts"
    if no_spread(values):
        return wilson_effective(float(values[0]), len(values), confidence), "Wilson over tasks (all equal)"
    low, high = t_interval(values, confidence)
    return Interval(max(low, 0.0), min(high, 1.0)), "t over per-task values"
