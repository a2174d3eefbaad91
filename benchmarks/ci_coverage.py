"""Coverage, type-I error and power of the analysis methods, measured on simulated suites.

The simulation calls the code paths behind ``summarize`` and ``compare`` (``task_estimate``,
``paired_test``, ``compare.verdict_of``, ``DifferenceModel``) on per-task arrays; building frames would
only add time. Every cell prints its Monte Carlo standard error.

- ``rates``: pass rates. Task pass probabilities from a Beta distribution, K Bernoulli repeats per task
  and variant, both variants alike (H0). Coverage of the one-arm interval of ``summarize`` (design-effect
  Wilson), coverage of ``compare``'s difference interval (the verdict's: the test inverted), and the
  rate of verdicts called (type-I).
- ``effects``: pass rates where the candidate is better (a logit shift of each task's pass
  probability): coverage of the verdict's interval of the true mean difference, and the share called.
- ``amounts``: costs. Task scales log-normal (σ = 1), K = 3 log-normal repeats (σ_w), variant a's
  costs × θ. Scenarios under H0 (θ = 1, with or without 10 % runaway episodes that cost 10×) and
  under effects (θ = 1.3; θ varying by task; a few tasks 5× dearer). Rate of verdicts called (type-I
  under H0), coverage of the ratio interval (the verdict's) and of the difference interval.
- ``power``: is the reported MDE honest? For a design, the effect is set to the MDE that
  ``compare`` reports from a large pilot of the same design, then the verdict's actual power is
  simulated: it should be 80 %.

Run: ``python benchmarks/ci_coverage.py [--part rates|effects|amounts|power|all] [--sims 1000] [--jobs 2]``.
Targets: coverage 93.5–96.5 %, verdict type-I <= 5.5 %.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

import numpy as np
from scipy import integrate, optimize, stats
from scipy.special import expit, logit

from coder_eval.analysis.stats.amounts import MIN_TASKS, amount_test
from coder_eval.analysis.stats.compare import log_of, verdict
from coder_eval.analysis.stats.estimate import task_estimate
from coder_eval.analysis.stats.paired import Arm, paired_test
from coder_eval.analysis.stats.power_model import DifferenceModel

BETAS = ((2.0, 2.0), (0.7, 0.5), (5.0, 1.0))
RATE_TASKS = (5, 10, 20, 50, 100)
REPEATS = (1, 2, 3, 5)
AMOUNT_TASKS = (2, 3, 5, 6, 8, 10, 15, 20, 30, 50, 100, 200)
PILOT = 100_000
"""Tasks in the pilot the power check takes its MDE from (large, so the MDE is that of the design)."""


class Amounts(NamedTuple):
    """A cost scenario: within-task noise, effect θ (its log varies by task with sd ``spread``)."""

    name: str
    noise: float
    theta: float
    spread: float = 0.0
    runaway: float = 0.0
    share: float = 0.0
    """Share of tasks where a costs ``theta`` times more (the rest: no effect)."""


SCENARIOS = (
    Amounts("H0", 0.5, 1.0),
    Amounts("H0, runaways", 0.5, 1.0, runaway=0.1),
    Amounts("θ=1.3", 0.5, 1.3),
    Amounts("θ≈1.3 by task", 0.5, 1.3, spread=0.3),
    Amounts("5× on 10 %", 0.5, 5.0, share=0.1),
)


def se(p: float, n: int) -> float:
    """Monte Carlo standard error of a proportion, in points."""
    return 100 * math.sqrt(max(p * (1 - p), 0.25 / n) / n)


def pct(hits: int, n: int) -> str:
    return f"{100 * hits / n:5.1f} ±{se(hits / n, n):.1f}"


def rates_cell(args: tuple[tuple[float, float], int, int, int]) -> str:
    """One (Beta, T, K) cell under H0."""
    (a, b), n_tasks, repeats, sims = args
    rng = np.random.default_rng([n_tasks, repeats, int(10 * a), int(10 * b)])
    truth, counts = a / (a + b), np.full(n_tasks, float(repeats))
    covered = diff_covered = called = 0
    for _ in range(sims):
        p = rng.beta(a, b, n_tasks)
        xa, xb = (rng.binomial(repeats, p) / repeats for _ in range(2))
        est = task_estimate(xa, "binary", counts)
        covered += est.low <= truth <= est.high
        r = paired_test(Arm.of(xa, counts), Arm.of(xb, counts), "binary")
        diff_covered += r.low <= 0 <= r.high
        called += verdict(r.diff, r.low, r.high, r.p_value) != "inconclusive"
    cells = "  ".join(pct(x, sims) for x in (covered, diff_covered, called))
    return f"{a:>4}/{b:<4} {n_tasks:>4} {repeats:>2}  {cells}"


EFFECT_SHIFTS = (0.7, 1.5)
"""Logit shifts of the candidate's task pass probabilities in the ``effects`` part."""


def true_difference(a: float, b: float, shift: float) -> float:
    """E[expit(logit(p) + shift) − p] for p ~ Beta(a, b): the mean difference the interval should cover."""
    return float(
        integrate.quad(lambda p: (expit(logit(p) + shift) - p) * stats.beta.pdf(p, a, b), 0, 1, limit=200)[0]
    )


def effects_cell(args: tuple[tuple[float, float], float, int, int, int]) -> str:
    """One (Beta, shift, T, K) cell with a true effect: coverage of the verdict's interval, share called."""
    (a, b), shift, n_tasks, repeats, sims = args
    rng = np.random.default_rng([n_tasks, repeats, int(10 * a), int(10 * b), int(10 * shift)])
    truth, counts = true_difference(a, b, shift), np.full(n_tasks, float(repeats))
    covered = called = 0
    for _ in range(sims):
        p = rng.beta(a, b, n_tasks)
        pa = expit(logit(np.clip(p, 1e-12, 1 - 1e-12)) + shift)
        xa, xb = rng.binomial(repeats, pa) / repeats, rng.binomial(repeats, p) / repeats
        r = paired_test(Arm.of(xa, counts), Arm.of(xb, counts), "binary", n_resamples=999)
        covered += r.low <= truth <= r.high
        called += verdict(r.diff, r.low, r.high, r.p_value) != "inconclusive"
    cells = "  ".join(pct(x, sims) for x in (covered, called))
    return f"{a:>4}/{b:<4} {shift:>5} {truth:6.3f} {n_tasks:>4} {repeats:>2}  {cells}"


def cost_draws(
    rng: np.random.Generator, s: Amounts, n_tasks: int, repeats: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Per-task mean costs of a and b; E[cost of b] = 1 per episode."""
    scale = rng.lognormal(-0.5, 1.0, n_tasks)
    theta = (
        np.exp(np.log(s.theta) + rng.normal(0, s.spread, n_tasks)) if s.spread else np.full(n_tasks, s.theta)
    )
    if s.share:
        theta = np.where(rng.random(n_tasks) < s.share, s.theta, 1.0)
    noise = [rng.lognormal(-(s.noise**2) / 2, s.noise, (n_tasks, repeats)) for _ in range(2)]
    if s.runaway:
        noise = [n * np.where(rng.random(n.shape) < s.runaway, 10.0, 1.0) for n in noise]
    return (scale[:, None] * noise[0] * theta[:, None]).mean(1), (scale[:, None] * noise[1]).mean(1)


def amounts_truth(s: Amounts) -> tuple[float, float]:
    """(geometric mean ratio, difference of means) the intervals should cover."""
    if s.share:
        return math.exp(s.share * math.log(s.theta)), s.share * (s.theta - 1) * (1 + 9 * s.runaway)
    return s.theta, (s.theta * math.exp(s.spread**2 / 2) - 1) * (1 + 9 * s.runaway)


def amounts_cell(args: tuple[Amounts, int, int, int]) -> str:
    """One (scenario, T) cell."""
    s, n_tasks, sims, resamples = args
    rng = np.random.default_rng([n_tasks, int(100 * s.theta), int(10 * s.runaway), int(100 * s.share)])
    ratio_truth, diff_truth = amounts_truth(s)
    called = ratio_covered = diff_covered = 0
    for _ in range(sims):
        xa, xb = cost_draws(rng, s, n_tasks)
        r = amount_test(xa, xb, n_resamples=resamples, seed=int(rng.integers(2**31)))
        log_ratio, log_low, log_high = (log_of(x) for x in (r.ratio, r.ratio_low, r.ratio_high))
        called += n_tasks >= MIN_TASKS and verdict(log_ratio, log_low, log_high, r.p_value) != "inconclusive"
        ratio_covered += r.ratio_low <= ratio_truth <= r.ratio_high
        diff_covered += r.low <= diff_truth <= r.high
    cells = "  ".join(pct(x, sims) for x in (called, ratio_covered, diff_covered))
    return f"{s.name:<14} {n_tasks:>4}  {cells}"


def rates_at(beta_shift: float, a: float, b: float, uniforms: tuple[np.ndarray, ...]) -> np.ndarray:
    """Per-task differences of a pass-rate design (common random numbers)."""
    p, ua, ub = uniforms
    pa = expit(logit(np.clip(p, 1e-9, 1 - 1e-9)) + beta_shift)
    return np.asarray((ua < pa[:, None]).mean(1) - (ub < p[:, None]).mean(1))


def power_cell(args: tuple[str, int, int, int]) -> str:
    """Actual power of the verdict when the true effect is the MDE reported from a large pilot."""
    design, n_tasks, repeats, sims = args
    rng = np.random.default_rng([n_tasks, repeats, len(design)])
    if design == "rates":
        big = (rng.beta(2, 2, PILOT), rng.random((PILOT, repeats)), rng.random((PILOT, repeats)))

        def gap(x: float) -> float:
            d = rates_at(x, 2, 2, big)
            return float(d.mean()) - DifferenceModel.from_pilot(d, 1.0).mde(n_tasks)

        if not gap(8.0) > 0:  # no shift reaches its own MDE: 80 % power is out of reach at this T
            return f"{design:<8} {n_tasks:>4} {repeats:>2}  no effect reaches 80 % power"
        shift = optimize.brentq(gap, 0.0, 8.0, xtol=1e-3)
        counts = np.full(n_tasks, float(repeats))

        def trial() -> bool:
            small = (rng.beta(2, 2, n_tasks), rng.random((n_tasks, repeats)), rng.random((n_tasks, repeats)))
            p, ua, ub = small
            pa = expit(logit(np.clip(p, 1e-9, 1 - 1e-9)) + shift)
            xa, xb = (ua < pa[:, None]).mean(1), (ub < p[:, None]).mean(1)
            r = paired_test(Arm.of(xa, counts), Arm.of(xb, counts), "binary")
            return verdict(r.diff, r.low, r.high, r.p_value) != "inconclusive"

        effect = float(rates_at(shift, 2, 2, big).mean())
    else:
        s0 = Amounts("pilot", 0.5, 1.0)
        logs = np.log(np.divide(*cost_draws(rng, s0, PILOT, repeats)))
        effect = math.exp(DifferenceModel.from_pilot(logs, None, MIN_TASKS).mde(n_tasks))
        s = Amounts("at mde", 0.5, effect)

        def trial() -> bool:
            xa, xb = cost_draws(rng, s, n_tasks, repeats)
            r = amount_test(xa, xb, n_resamples=999)
            log_ratio, log_low, log_high = (log_of(x) for x in (r.ratio, r.ratio_low, r.ratio_high))
            return n_tasks >= MIN_TASKS and verdict(log_ratio, log_low, log_high, r.p_value) != "inconclusive"

    hits = sum(trial() for _ in range(sims))
    return f"{design:<8} {n_tasks:>4} {repeats:>2}  {effect:8.3f}  {pct(hits, sims)}"


def run(
    title: str, header: str, cell: Callable[..., str], cells: Iterable[tuple[object, ...]], jobs: int
) -> None:
    start = time.perf_counter()
    print(f"\n{title}\n{header}")
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for line in pool.map(cell, cells):
            print(line, flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=("rates", "effects", "amounts", "power", "all"), default="all")
    parser.add_argument(
        "--sims", type=int, default=1000, help="simulated suites per cell (>= 1000 for reports)"
    )
    parser.add_argument("--resamples", type=int, default=1999, help="Monte Carlo sign flips beyond 30 tasks")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = parser.parse_args()
    n = args.sims
    print(f"{n} simulated suites per cell; ± is the Monte Carlo SE in points (≈ {se(0.95, n):.1f} at 95 %)")
    if args.part in ("rates", "all"):
        rate_cells = [(beta, t, k, n) for beta, t, k in itertools.product(BETAS, RATE_TASKS, REPEATS)]
        header = "beta          T  K  one-arm cov.  diff cov.(H0)  verdicts(H0)"
        run("Pass rates, both variants alike", header, rates_cell, rate_cells, args.jobs)
    if args.part in ("effects", "all"):
        effect_cells = [
            (beta, shift, t, k, n)
            for beta, shift, t, k in itertools.product(BETAS, EFFECT_SHIFTS, (10, 20, 50, 100), (1, 3))
        ]
        header = "beta      shift  truth    T  K  verdict's interval cov.  verdicts (power)"
        run("Pass rates, candidate better", header, effects_cell, effect_cells, args.jobs)
    if args.part in ("amounts", "all"):
        amount_cells = [(s, t, n, args.resamples) for s, t in itertools.product(SCENARIOS, AMOUNT_TASKS)]
        header = (
            f"scenario          T  verdicts      ratio cov.    diff cov.   (no verdict below T = {MIN_TASKS})"
        )
        run(
            "Costs, K = 3: verdict rate (type-I under H0), coverage",
            header,
            amounts_cell,
            amount_cells,
            args.jobs,
        )
    if args.part in ("power", "all"):
        power_cells = [("rates", t, k, n) for k, t in itertools.product((1, 3), (10, 20, 30, 50, 100, 300))]
        power_cells += [("amounts", t, 3, n) for t in (10, 20, 50, 100)]
        header = "design      T  K       mde  actual power (target 80)"
        run("Power at the reported MDE", header, power_cell, power_cells, args.jobs)


if __name__ == "__main__":
    main()
