"""What ``--until-conclusive`` saves, and that it stays honest: simulated suites like the demo's.

Each suite has tasks of varying difficulty (baseline pass probability expit(θ), θ ~ N(0, 1)), two
arms and K = 3 repeats per task and arm; a task's observation is its paired difference (candidate's
mean minus baseline's). The confidence sequence (``coder_eval.analysis.stats.sequential``) looks after
every task, in a random order, and stops at its first decision or at the cap.

- ``null``: the sharp null (both arms the same on every task).
- ``mixed``: heterogeneous task effects that average to zero (each task's logit shifted by ±1 at
  random: real differences on every task, none on average).
- ``effect 10`` / ``effect 20`` / ``effect 40``: the candidate's logit shifted so its pass rate is
  10 (20, 40) points higher on average; 10 points is below delta, what a user who declared delta did
  not plan for.

For each it prints how often a difference was called (type-I on the first two: the share of suites
that called one at *any* look, which bounds the error at every look), the power, the mean episodes
spent, and the episodes of a fixed design with the same power (the smallest task count whose paired
t test on the task differences, at the same alpha, has at least that power; its power simulated too).
It also divides the sequence's episodes by those of fixed designs of 80 % and 90 % power for the
row's effect (``stats.forecast.fixed_design``, what ``plan`` compares with): below 1 the
sequence is cheaper than a fixed design that settles for that power.

Run: ``python benchmarks/sequential_savings.py [--sims 1000] [--max-tasks 80] [--delta 0.2]``.
Goals: type-I <= 5 % at every look; a 20-point effect at the fixed design's power with at most two
thirds of its episodes, a 40-point effect with at most half. ``--write-docs`` rewrites the figures
section of docs/statistics.md (tests/analysis/test_sequential_savings.py checks it).
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy import stats

from coder_eval.analysis.stats.forecast import FIXED_SIMS, fixed_design, paired_differences, shift_for
from coder_eval.analysis.stats.sequential import ALPHA, confidence_sequence, decisions

REPEATS = 3
SCENARIOS = {"null": 0.0, "mixed": 0.0, "effect 20": 0.2, "effect 40": 0.4, "effect 10": 0.1}
"""Each scenario draws from its own stream (seeded by its place here), so a row added last changes no
other row; the table shows them by effect."""
POWERS = (0.8, 0.9)
"""Fixed designs of these powers, for the row's effect, the sequence is also compared with."""
DOC = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
BEGIN = "<!-- sequential figures: begin (benchmarks/sequential_savings.py --write-docs) -->"
END = "<!-- sequential figures: end -->"


class Design(NamedTuple):
    """The simulated suites: how many, the cap on tasks, delta, and the seed."""

    sims: int = 1000
    max_tasks: int = 80
    delta: float = 0.2
    seed: int = 24


class Row(NamedTuple):
    """One scenario's figures."""

    scenario: str
    called: float
    no_effect: float
    episodes: float
    ever: float
    fixed_tasks: int
    fixed_power: float
    at_powers: tuple[int, ...] = ()
    """Tasks of the fixed designs of ``POWERS`` for the row's effect (none on the null rows)."""

    @property
    def fixed_episodes(self) -> int:
        return self.fixed_tasks * 2 * REPEATS


def differences(scenario: str, tasks: int, rng: np.random.Generator, suites: int = 1) -> np.ndarray:
    """Per-task paired differences (candidate minus baseline task means): one row per suite."""
    if scenario == "mixed":
        shift: float | np.ndarray = rng.choice([-1.0, 1.0], (suites, tasks))
    else:
        shift = shift_for(SCENARIOS[scenario])
    return paired_differences(shift, tasks, REPEATS, rng, suites)


def sequential(scenario: str, design: Design, rng: np.random.Generator) -> tuple[float, float, float, float]:
    """Share of suites calling a difference at the stop, share ending "no effect", mean episodes to
    the stop, and the share whose interval excluded 0 at any look of the whole path (had the run
    not stopped: the type-I error "at every look")."""
    called = no_effect = episodes = ever = 0
    for _ in range(design.sims):
        x = differences(scenario, design.max_tasks, rng)[0]
        seq = confidence_sequence(x)
        steps = decisions(seq, design.delta)
        stop = next((t for t, d in enumerate(steps) if d is not None), len(steps) - 1)
        called += steps[stop] in ("better", "worse")
        no_effect += steps[stop] == "no_effect"
        episodes += (stop + 1) * 2 * REPEATS
        ever += bool(seq.zero_rejected[-1])
    n = design.sims
    return called / n, no_effect / n, episodes / n, ever / n


def fixed_power(scenario: str, tasks: int, sims: int, rng: np.random.Generator) -> float:
    """Power of the fixed design with ``tasks`` tasks: the paired t test on task differences."""
    d = differences(scenario, tasks, rng, max(sims, FIXED_SIMS))
    sd = d.std(axis=1, ddof=1)
    t = np.divide(d.mean(axis=1) * np.sqrt(tasks), sd, out=np.zeros(len(d)), where=sd > 0)
    return float(np.mean(np.abs(t) > stats.t.ppf(1 - ALPHA / 2, tasks - 1)))


def fixed_match(scenario: str, power: float, design: Design, rng: np.random.Generator) -> tuple[int, float]:
    """The smallest fixed task count (steps of 2) whose simulated power reaches ``power`` (at most
    0.99: a power of 1 in a finite simulation names no design)."""
    power, tasks = min(power, 0.99), 4
    while tasks < 4 * design.max_tasks:
        got = fixed_power(scenario, tasks, design.sims, rng)
        if got >= power:
            return tasks, got
        tasks += 2
    return tasks, fixed_power(scenario, tasks, design.sims, rng)


def measure(design: Design) -> list[Row]:
    """Every scenario's row (deterministic for a design)."""
    rows = []
    for i, scenario in enumerate(SCENARIOS):
        rng = np.random.default_rng([design.seed, i])
        called, no_effect, episodes, ever = sequential(scenario, design, rng)
        effect = SCENARIOS[scenario]
        tasks, power = fixed_match(scenario, called, design, rng) if effect else (0, 0.0)
        at = tuple(fixed_design(effect, p, REPEATS, design.seed).tasks for p in POWERS) if effect else ()
        rows.append(Row(scenario, called, no_effect, episodes, ever, tasks, power, at))
    return rows


def table(rows: list[Row], design: Design) -> str:
    """The figures as a Markdown table, as docs/statistics.md quotes them. The last column compares
    with the fixed design sized for an effect of delta (the row whose effect is delta)."""
    sized = next((r for r in rows if SCENARIOS[r.scenario] == design.delta), None)
    lines = [
        f"{design.sims} simulated suites per row, {REPEATS} repeats, at most {design.max_tasks} tasks, "
        f"delta = {design.delta}, alpha = {ALPHA} (seed {design.seed}).",
        "",
        '| suite | called a difference | 0 excluded at any look | ended "no effect" | mean episodes '
        "| fixed design of the same power | episodes / fixed design sized for delta "
        "| episodes / fixed design of 80 % power | episodes / fixed design of 90 % power |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda row: (SCENARIOS[row.scenario], row.scenario != "null")):
        fixed = (
            f"{r.fixed_episodes} episodes ({r.fixed_tasks} tasks, power {r.fixed_power:.3f}): "
            f"×{r.episodes / r.fixed_episodes:.2f}"
            if r.fixed_tasks
            else "-"
        )
        ratio = f"{r.episodes / sized.fixed_episodes:.2f}" if sized and sized.fixed_tasks else "-"
        at = [f"{r.episodes / (t * 2 * REPEATS):.2f} ({t} tasks)" for t in r.at_powers] or ["-"] * len(POWERS)
        lines.append(
            f"| {r.scenario} | {r.called:.3f} | {r.ever:.3f} | {r.no_effect:.3f} | {r.episodes:.0f} "
            f"| {fixed} | {ratio} | {' | '.join(at)} |"
        )
    return "\n".join(lines)


def write_docs(text: str, doc: Path = DOC) -> None:
    """Replace the figures section of ``doc`` with ``text``."""
    old = doc.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    doc.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}\n{END}", old), encoding="utf-8")


def section(doc: Path = DOC) -> str:
    """The figures section of ``doc`` as written."""
    found = re.search(re.escape(BEGIN) + "\n(.*?)\n" + re.escape(END), doc.read_text(encoding="utf-8"), re.S)
    return found.group(1) if found else ""


DOCS_DESIGN = Design(sims=200)
"""The design the docs quote (small enough for a test to run it again)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=Design().sims)
    parser.add_argument("--max-tasks", type=int, default=Design().max_tasks)
    parser.add_argument("--delta", type=float, default=Design().delta)
    parser.add_argument("--write-docs", action="store_true", help="Rewrite docs/statistics.md's figures.")
    args = parser.parse_args()
    design = DOCS_DESIGN if args.write_docs else Design(args.sims, args.max_tasks, args.delta)
    started = time.perf_counter()
    text = table(measure(design), design)
    print(text)
    print(f"\n{time.perf_counter() - started:.0f} s")
    if args.write_docs:
        write_docs(text)


if __name__ == "__main__":
    main()
