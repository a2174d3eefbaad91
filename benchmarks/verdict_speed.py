"""How long the comparisons of a demo-sized run take: each ``compare`` a report makes (seven metrics,
MDE included), the whole declared comparison (``verdicts``, with and without Holm), and the compare
report's planning section.

The run is shaped like the offline demo: 8 graded tasks × 3 repeats × 2 variants (pass rates, scores
on a fine grid, log-normal tokens, cost, duration, turns and tool calls) and 20 trigger-dataset rows
that the headline leaves out. Each case is timed ``--repeat`` times in this process and the median
printed, beside the baseline measured in the same run: a paired t-test with its t interval on the same
per-task means (``scipy.stats.ttest_rel``), the cheapest paired comparison there is, so the ratio is
what the exact tests, their inverted intervals and the MDE cost on top of it. ``--tasks`` scales the
graded tasks (``--tasks 80`` for a run ten times as large).

Run: ``python benchmarks/verdict_speed.py [--repeat 7] [--tasks 8]``. Target: every comparison of the
demo-sized run well under a second.
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import pandas as pd
from compare_speed import median_ms  # the same timing as compare_speed.py (run from benchmarks/)
from scipy import stats

from coder_eval.analysis import compare
from coder_eval.analysis.views.notebook import REPORT_METRICS  # (also in versions without the verdict engine)

ARMS = ("baseline", "with_skill")


def demo_sized(n_tasks: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(episodes, criteria) of a run shaped like the demo: graded tasks, then 20 trigger rows."""
    episodes, criteria = [], []
    scale = rng.lognormal(0, 0.8, n_tasks)
    for arm, boost in zip(ARMS, (0.0, 0.35), strict=True):
        for i in range(n_tasks):
            for repeat in range(3):
                passed = bool(rng.random() < min(0.95, 0.5 + boost))
                tokens = float(rng.lognormal(np.log(40_000 * scale[i]), 0.3))
                score = round(float(rng.uniform(0.4, 1.0)) * (0.5 + passed / 2), 3)
                episodes.append(episode(f"t{i}", arm, repeat, passed, score, tokens, rng))
                criteria.append(labels(f"t{i}", arm, None, None))
        for row in range(20):
            for repeat in range(3):
                expected = "sitectl" if row < 12 else "none"
                observed = expected if rng.random() < (0.9 if arm == "with_skill" else 0.0) else "none"
                right = observed == expected
                episodes.append(episode(f"row{row}", arm, repeat, right, float(right), 9000.0, rng))
                criteria.append(labels(f"row{row}", arm, expected, observed))
    return pd.DataFrame(episodes).astype({"passed": "boolean"}), pd.DataFrame(criteria)


def episode(
    task: str, arm: str, repeat: int, passed: bool, score: float, tokens: float, rng: np.random.Generator
) -> dict[str, object]:
    """One row of the episodes frame (the columns the comparisons read)."""
    return {
        "run_id": "r",
        "episode_id": f"{task}--{arm}--r{repeat}",
        "task_id": task,
        "variant_id": arm,
        "repeat": repeat,
        "outcome": "pass" if passed else "fail",
        "passed": passed,
        "score": score,
        "total_tokens": tokens,
        "cost_usd": tokens * 3e-6,
        "duration_s": tokens / 900,
        "num_turns": float(rng.integers(2, 8)),
        "n_tool_calls": int(rng.integers(1, 9)),
    }


def labels(task: str, arm: str, expected: str | None, observed: str | None) -> dict[str, object]:
    """One row of the criteria frame (what ``headline_tasks`` reads)."""
    return {"task_id": task, "variant_id": arm, "expected_label": expected, "observed_label": observed}


def t_baseline(episodes: pd.DataFrame, metric: str) -> tuple[float, float, float]:
    """A paired t-test and its t interval over the same per-task means: the baseline."""
    means = episodes.assign(v=episodes[metric].astype(float)).pivot_table(
        index="task_id", columns="variant_id", values="v", aggfunc="mean"
    )
    d = (means[ARMS[1]] - means[ARMS[0]]).to_numpy(float)
    result = stats.ttest_rel(means[ARMS[1]], means[ARMS[0]])
    low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    return float(result.pvalue), float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7, help="timings per case (median printed)")
    parser.add_argument("--tasks", type=int, default=8, help="graded tasks (the demo has 8)")
    args = parser.parse_args()
    episodes, criteria = demo_sized(args.tasks, np.random.default_rng(0))
    graded = episodes[~episodes["task_id"].str.startswith("row")]
    print(
        f"{args.tasks} graded tasks × 3 repeats × 2 variants and 20 trigger rows; median ms of {args.repeat}"
    )
    print(f"{'compare(...)':<34}{'ms':>9}{'t-test ms':>11}{'ratio':>8}")
    total = 0.0
    for metric in REPORT_METRICS:
        ours = median_ms(partial(compare, graded, ARMS[1], ARMS[0], metric), args.repeat)
        theirs = median_ms(partial(t_baseline, graded, metric), args.repeat)
        total += ours
        print(f"  {metric:<32}{ours:>9.1f}{theirs:>11.2f}{ours / theirs:>7.0f}×", flush=True)
    print(f"  {'all seven':<32}{total:>9.1f}")
    try:
        from coder_eval.analysis.answer.engine import Declaration, verdicts
        from coder_eval.analysis.answer.planning import planning
        from coder_eval.analysis.frames.load import Runs
    except ImportError:
        print("(no verdict engine in this version: the declared comparison is not timed)")
        return
    runs = Runs(episodes, criteria, pd.DataFrame(), pd.DataFrame())
    cases = (("verdicts(runs)", Declaration()), ("verdicts(runs, adjust='holm')", Declaration(adjust="holm")))
    for label, declaration in cases:
        print(f"{label:<34}{median_ms(partial(verdicts, runs, declaration), args.repeat):>9.1f}", flush=True)
    declared = verdicts(runs)
    print(f"{'planning(verdicts)':<34}{median_ms(partial(planning, declared), args.repeat):>9.1f}")


if __name__ == "__main__":
    main()
