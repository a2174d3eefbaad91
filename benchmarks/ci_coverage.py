"""Coverage of ``summarize``'s 95 % intervals and type-I error of ``compare`` on simulated suites.

Tasks differ: each task's pass probability is drawn from a Beta distribution, then K repeats are
Bernoulli draws. The simulation calls ``task_estimate`` and ``paired_test``, the code paths behind
``summarize`` and ``compare``, on per-task arrays (building frames would only add time).

Run: ``python benchmarks/ci_coverage.py [--sims 400] [--jobs 2]``. Targets: coverage 93.5–96.5 %,
type-I error <= 5.5 %. Costs (log-normal, heavy-tailed) are reported too; STATS.md expects them to
under-cover at small T.
"""

from __future__ import annotations

import argparse
import itertools
import time
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

import numpy as np

from coder_eval.analysis.intervals import task_estimate
from coder_eval.analysis.paired import paired_test

TASKS = (20, 50, 100)
REPEATS = (1, 3, 5)
BETAS = ((2.0, 2.0), (0.7, 0.5))
COST_SIGMA = 1.0


class Cell(NamedTuple):
    n_tasks: int
    repeats: int
    beta: tuple[float, float]
    sims: int


class CellResult(NamedTuple):
    cell: Cell
    coverage: float
    type_i: float
    false_verdicts: float
    cost_coverage: float
    seconds: float


def draw(rng: np.random.Generator, p: np.ndarray, repeats: int) -> np.ndarray:
    """Per-task pass rates of one variant: K Bernoulli draws per task, averaged."""
    return rng.binomial(repeats, p) / repeats


def cost_means(rng: np.random.Generator, n_tasks: int, repeats: int) -> np.ndarray:
    """Per-task mean cost: task scale log-normal, repeats log-normal around it; the true mean is 1.0."""
    scale = rng.lognormal(-(COST_SIGMA**2), COST_SIGMA, size=n_tasks)
    noise = rng.lognormal(-0.125, 0.5, size=(n_tasks, repeats))
    return (scale[:, None] * noise).mean(axis=1) * np.exp(COST_SIGMA**2 / 2)


def run_cell(cell: Cell) -> CellResult:
    """Coverage and type-I error over ``cell.sims`` simulated suites."""
    start = time.perf_counter()
    a, b = cell.beta
    truth = a / (a + b)
    rng = np.random.default_rng([cell.n_tasks, cell.repeats, int(a * 10), int(b * 10)])
    covered = rejected = called = cost_covered = 0
    for _ in range(cell.sims):
        p = rng.beta(a, b, size=cell.n_tasks)
        xa, xb = draw(rng, p, cell.repeats), draw(rng, p, cell.repeats)
        est = task_estimate(xa, "binary", cell.repeats)
        covered += est.low <= truth <= est.high
        result = paired_test(xa, xb, "binary", cell.repeats)
        rejected += result.p_value < 0.05
        called += result.p_value < 0.05 and (result.low > 0 or result.high < 0)
        cost = task_estimate(cost_means(rng, cell.n_tasks, cell.repeats), "amount", cell.repeats)
        cost_covered += cost.low <= 1.0 <= cost.high
    n = cell.sims
    return CellResult(
        cell, covered / n, rejected / n, called / n, cost_covered / n, time.perf_counter() - start
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sims", type=int, default=400, help="simulated suites per cell")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = parser.parse_args()
    cells = [Cell(t, k, beta, args.sims) for beta, t, k in itertools.product(BETAS, TASKS, REPEATS)]
    se = 100 * np.sqrt(0.95 * 0.05 / args.sims)
    print(f"{args.sims} simulated suites per cell; Monte Carlo SE of a 95% coverage ≈ {se:.1f} points")
    header = ("beta", "T", "K", "coverage", "type-I", "verdicts", "cost cov", "s")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (10, 4, 2, 9, 7, 9, 9, 6), strict=True)))
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(run_cell, cells):
            c = r.cell
            print(
                f"{c.beta!s:>10} {c.n_tasks:>4} {c.repeats:>2} {100 * r.coverage:>8.1f}% "
                f"{100 * r.type_i:>6.1f}% {100 * r.false_verdicts:>8.1f}% {100 * r.cost_coverage:>8.1f}% "
                f"{r.seconds:>6.1f}"
            )


if __name__ == "__main__":
    main()
