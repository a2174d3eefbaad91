"""How long ``compare`` takes as the number of tasks grows, with every task differing (the worst case
for an exact sign-flip test), and ``compare_all`` on 5 variants × 20 tasks.

Each case is timed ``--repeat`` times in this process; the median is printed, and for typical pass
rates with 3 repeats also the first call with the caches of exact null distributions emptied (as in a
fresh process). The baseline is
``scipy.stats.permutation_test`` enumerating every sign pattern (what an exact test costs without the
lattice convolution or the two-half enumeration), timed in the same run on the same differences.

Run: ``python benchmarks/compare_speed.py [--repeat 7]``. Targets: every ``compare`` well under 100 ms,
``compare_all`` under 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd
from scipy import stats

from coder_eval.analysis import compare, compare_all
from coder_eval.analysis.stats.signflip import fair_binomial, grouped_tail, sign_flip

TASKS = (5, 6, 8, 10, 20, 21, 30, 50, 60, 61, 100, 300, 1000)
BASELINE_TASKS = (16, 20)


def frame(outcomes: dict[str, list[list[int]]], costs: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """An episodes frame from per-variant, per-task lists of 0/1 outcomes (and per-episode costs)."""
    rows = [
        {
            "task_id": f"t{i}",
            "variant_id": v,
            "repeat": r,
            "outcome": "pass" if x else "fail",
            "passed": bool(x),
        }
        for v, tasks in outcomes.items()
        for i, runs in enumerate(tasks)
        for r, x in enumerate(runs)
    ]
    df = pd.DataFrame(rows).astype({"passed": "boolean"})
    if costs is not None:
        df["cost_usd"] = np.concatenate([costs[v] for v in outcomes])
    return df


def median_ms(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def cases(n_tasks: int, rng: np.random.Generator) -> dict[str, tuple[pd.DataFrame, str]]:
    """Designs of ``n_tasks`` tasks: three where every task differs, and typical pass rates with repeats."""
    every = frame({"a": [[1]] * n_tasks, "b": [[0]] * n_tasks})
    thirds = frame(
        {"a": [[1, 1, 0]] * n_tasks, "b": [[0, 0, 1] if i % 2 else [1, 0, 0] for i in range(n_tasks)]}
    )
    cost_b = rng.lognormal(0, 1, n_tasks).repeat(3)
    costly = frame(
        {"a": [[1, 1, 1]] * n_tasks, "b": [[1, 1, 1]] * n_tasks},
        {"a": cost_b * rng.lognormal(0.2, 0.3, 3 * n_tasks), "b": cost_b},
    )
    p = rng.beta(1, 1, n_tasks)
    typical = frame({v: [[int(x) for x in rng.random(3) < q] for q in p] for v in "ab"})
    return {
        "pass, K=1": (every, "passed"),
        "pass, K=3": (thirds, "passed"),
        "cost, K=3": (costly, "cost_usd"),
        "typical, K=3": (typical, "passed"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7, help="timings per case (median printed)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("compare(), every task differing: median ms of", args.repeat, "runs")
    print("columns: pass rates, every task differing, K = 1 and K = 3; cost, every task differing;")
    print("typical pass rates with K = 3 (tasks from Beta(1, 1)); that case again with cold caches")
    print(f"{'T':>5}  {'pass, K=1':>10}  {'pass, K=3':>10}  {'cost, K=3':>10}  {'typical':>10}  {'cold':>8}")
    for n_tasks in TASKS:
        designs = cases(n_tasks, rng)
        grouped_tail.cache_clear()  # a process's first call computes the exact null distributions
        fair_binomial.cache_clear()
        cold = median_ms(partial(compare, designs["typical, K=3"][0], "a", "b"), 1)
        row = [median_ms(partial(compare, df, "a", "b", m), args.repeat) for df, m in designs.values()]
        print(f"{n_tasks:>5}  " + "  ".join(f"{ms:>10.1f}" for ms in row) + f"  {cold:>8.1f}", flush=True)
    variants = {
        v: [[int(x) for x in rng.random(3) < p] for _ in range(20)]
        for v, p in zip("abcde", (0.3, 0.45, 0.5, 0.6, 0.8), strict=True)
    }
    everything = frame(variants)
    print(
        "\ncompare_all, 5 variants × 20 tasks × 3 repeats:",
        f"{median_ms(lambda: compare_all(everything), 3):.0f} ms",
    )
    print("\nthe sign-flip p-value alone, every one of T tasks differing (ms):")
    print(f"{'T':>5}  {'coder_eval':>10}  {'scipy exact':>11}  {'ratio':>7}")
    for n_tasks in BASELINE_TASKS:
        d = rng.normal(0.5, 1.0, n_tasks)
        ours = median_ms(partial(sign_flip, d), args.repeat)
        theirs = median_ms(
            partial(
                stats.permutation_test,
                (d,),
                np.mean,
                permutation_type="samples",
                n_resamples=np.inf,
                vectorized=True,
            ),
            1,
        )
        print(f"{n_tasks:>5}  {ours:>10.2f}  {theirs:>11.1f}  {theirs / ours:>7.0f}×")


if __name__ == "__main__":
    main()
