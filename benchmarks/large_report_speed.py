"""How long the comparisons of a large run's report take: 500 graded tasks × 5 repeats × 2 variants, every
report metric (the seven ``compare`` calls a compare report makes, MDE included), and the whole
declared comparison (``verdicts``, with and without Holm), each against baselines measured in the same
run.

Two baselines, each on the same per-task means: a paired t-test with its t interval
(``scipy.stats.ttest_rel``), the cheapest paired comparison there is; and the Monte Carlo sign-flip
test and its inversion as this version computed them before (a 0/1 matrix of the sign patterns times
the differences), the step that dominated a comparison of this size. The ratio to the first is what
the exact tests, inverted intervals, bounds and MDE cost on top of a t-test.

Run: ``python benchmarks/large_report_speed.py [--repeat 3] [--tasks 500] [--repeats 5]``. Target: the
seven ``compare`` calls together well under a second.
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import pandas as pd
from compare_speed import median_ms  # the same timing as compare_speed.py (run from benchmarks/)
from scipy import stats

from coder_eval.analysis import compare
from coder_eval.analysis.answer.engine import REPORT_METRICS, Declaration, verdicts
from coder_eval.analysis.frames.load import Runs
from coder_eval.analysis.stats.intervals import N_RESAMPLES, SEED

ARMS = ("baseline", "with_skill")


def large_run(n_tasks: int, repeats: int, rng: np.random.Generator) -> pd.DataFrame:
    """An episodes frame: pass rates near 0.6 (the candidate higher), scores on a fine grid, log-normal
    tokens, cost and duration, turns and tool calls."""
    scale = np.repeat(rng.lognormal(0, 0.8, n_tasks), repeats)
    rows = []
    for arm, boost in zip(ARMS, (0.0, 0.1), strict=True):
        passed = rng.random(n_tasks * repeats) < 0.55 + boost
        tokens = rng.lognormal(np.log(40_000 * scale), 0.3)
        rows.append(
            pd.DataFrame(
                {
                    "run_id": "r",
                    "task_id": np.repeat([f"t{i}" for i in range(n_tasks)], repeats),
                    "variant_id": arm,
                    "repeat": np.tile(np.arange(repeats), n_tasks),
                    "outcome": np.where(passed, "pass", "fail"),
                    "passed": passed,
                    "score": np.round(rng.uniform(0.3, 1.0, len(passed)) * (0.5 + passed / 2), 3),
                    "total_tokens": tokens,
                    "cost_usd": tokens * 3e-6,
                    "duration_s": tokens / 900,
                    "num_turns": rng.integers(2, 9, len(passed)).astype(float),
                    "n_tool_calls": rng.integers(1, 12, len(passed)),
                }
            )
        )
    frame = pd.concat(rows, ignore_index=True)
    return frame.assign(
        episode_id=frame["task_id"] + "--" + frame["variant_id"] + "--r" + frame["repeat"].astype(str)
    )


def task_differences(episodes: pd.DataFrame, metric: str) -> np.ndarray:
    means = episodes.pivot_table(index="task_id", columns="variant_id", values=metric, aggfunc="mean")
    return (means[ARMS[1]] - means[ARMS[0]]).to_numpy(float)


def t_baseline(episodes: pd.DataFrame, metric: str) -> float:
    """A paired t-test and its t interval over the same per-task means."""
    d = task_differences(episodes, metric.replace("passed", "passed_f"))
    stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def matrix_monte_carlo(d: np.ndarray) -> float:
    """The sign patterns as a 0/1 matrix times the differences (the previous computation), sorted
    subset means as the inversion needs them."""
    rng = np.random.default_rng(SEED)
    sums, sizes = [], []
    for start in range(0, N_RESAMPLES, 1000):
        size = min(1000, N_RESAMPLES - start)
        bits = rng.integers(0, 256, size=(size, (len(d) + 7) // 8), dtype=np.uint8)
        flipped = np.unpackbits(bits, axis=1, count=len(d)).astype(np.float64)
        sums.append(flipped @ d)
        sizes.append(flipped.sum(axis=1))
    s, k = np.concatenate(sums), np.concatenate(sizes)
    means = np.sort(np.concatenate([s, d.sum() - s]) / np.maximum(np.concatenate([k, len(d) - k]), 1))
    return float(means[len(means) // 2])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="timings per case (median printed)")
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    episodes = large_run(args.tasks, args.repeats, np.random.default_rng(0)).astype({"passed": "boolean"})
    episodes["passed_f"] = episodes["passed"].astype(float)
    print(f"{args.tasks} tasks × {args.repeats} repeats × 2 variants; median ms of {args.repeat}")
    print(f"{'compare(...)':<22}{'ms':>9}{'t-test ms':>11}{'ratio':>8}{'old MC ms':>11}")
    total = 0.0
    for metric in REPORT_METRICS:
        ours = median_ms(partial(compare, episodes, ARMS[1], ARMS[0], metric), args.repeat)
        theirs = median_ms(partial(t_baseline, episodes, metric), args.repeat)
        d = task_differences(episodes, "passed_f" if metric == "passed" else metric)
        old = median_ms(partial(matrix_monte_carlo, d), args.repeat)
        total += ours
        print(f"  {metric:<20}{ours:>9.1f}{theirs:>11.2f}{ours / theirs:>7.0f}×{old:>11.1f}", flush=True)
    print(f"  {'all seven':<20}{total:>9.1f}")
    graded = pd.DataFrame(columns=["task_id", "variant_id", "expected_label", "observed_label"])
    runs = Runs(episodes.drop(columns="passed_f"), graded, pd.DataFrame(), pd.DataFrame())
    for label, declaration in (("verdicts", Declaration()), ("verdicts, Holm", Declaration(adjust="holm"))):
        print(f"{label:<22}{median_ms(partial(verdicts, runs, declaration), args.repeat):>9.1f}", flush=True)


if __name__ == "__main__":
    main()
