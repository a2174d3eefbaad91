"""How well ``coder-eval calibrate``'s kappa interval covers, and how often a judge is declared fit to gate
on: simulated judges against simulated people, through the library's own functions
(``calibration.kappa_interval``, ``calibration.fitness``).

Each simulated labelling has ``n`` episodes; the people pass each with probability ``prevalence``;
the judge agrees with the people so that the population kappa is ``kappa`` with the judge passing as
often as the people do (errors split evenly between false passes and false fails). For each cell it
prints the share of intervals that hold the true kappa, and the share of judges declared fit (at
kappa 0.6 that is the error the rule must keep at most 2.5 %). Then the kappa a judge needs at 30
episodes (prevalence 0.5) for the median lower end of its interval to reach 0.6: what the docs quote.

Run: ``python benchmarks/kappa_coverage.py [--sims 1000]``. ``--write-docs`` rewrites the figures
section of docs/statistics.md with the docs' design (tests/analysis/test_kappa_coverage.py checks it).
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from coder_eval.analysis.judging.calibration import MIN_KAPPA, fitness, kappa_interval

DOC = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
BEGIN = "<!-- kappa figures: begin (benchmarks/kappa_coverage.py --write-docs) -->"
END = "<!-- kappa figures: end -->"
CELLS = [(n, prevalence, kappa) for n in (30, 100) for prevalence in (0.1, 0.5) for kappa in (0.6, 0.8)]
NO_BIAS = (float("nan"), float("nan"), float("nan"))


class Design(NamedTuple):
    sims: int = 1000
    seed: int = 5


class Cell(NamedTuple):
    n: int
    prevalence: float
    kappa: float
    coverage: float
    fit: float


def labelling(
    rng: np.random.Generator, n: int, prevalence: float, kappa: float
) -> tuple[np.ndarray, np.ndarray]:
    """(judge, people) verdicts of ``n`` episodes with population kappa ``kappa``."""
    people = rng.random(n) < prevalence
    chance = prevalence**2 + (1 - prevalence) ** 2
    error = (1 - chance) * (1 - kappa) / 2  # each of false pass and false fail
    miss, false_pass = error / prevalence, error / (1 - prevalence)
    judge = np.where(people, rng.random(n) >= miss, rng.random(n) < false_pass)
    return judge, people


def cell(n: int, prevalence: float, kappa: float, design: Design, rng: np.random.Generator) -> Cell:
    covered = fit = 0
    for _ in range(design.sims):
        judge, people = labelling(rng, n, prevalence, kappa)
        low, high = kappa_interval(judge, people, seed=int(rng.integers(2**31)))
        covered += low <= kappa <= high
        minority = int(min(people.sum(), (~people).sum()))
        fit += fitness(n, low, NO_BIAS, minority)[0]
    return Cell(n, prevalence, kappa, covered / design.sims, fit / design.sims)


def kappa_needed(design: Design, n: int = 30, prevalence: float = 0.5) -> float:
    """The smallest kappa (steps of 0.01) whose interval's lower end has a median of at least 0.6."""
    rng = np.random.default_rng([design.seed, n])
    for kappa in np.arange(0.60, 1.0, 0.01):
        lows = [
            kappa_interval(*labelling(rng, n, prevalence, float(kappa)), seed=i)[0]
            for i in range(design.sims // 2)
        ]
        if np.median(lows) >= MIN_KAPPA:
            return round(float(kappa), 2)
    return 1.0


def measure(design: Design) -> tuple[list[Cell], float]:
    rng = np.random.default_rng(design.seed)
    return [cell(*c, design, rng) for c in CELLS], kappa_needed(design)


def table(cells: list[Cell], needed: float, design: Design) -> str:
    lines = [
        f"{design.sims} simulated labellings per row (seed {design.seed}); the rule: at least 30 episodes, "
        "5 of each verdict, and the interval's lower end at least 0.6.",
        "",
        "| episodes | people's pass rate | true kappa | interval covers | declared fit |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {c.n} | {c.prevalence:g} | {c.kappa:g} | {c.coverage:.3f} | {c.fit:.3f} |" for c in cells]
    lines += [
        "",
        f"At 30 episodes (people's pass rate 0.5) the lower end's median reaches 0.6 from kappa "
        f"{needed:.2f}.",
    ]
    return "\n".join(lines)


def write_docs(text: str, doc: Path = DOC) -> None:
    old = doc.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    doc.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}\n{END}", old), encoding="utf-8")


def section(doc: Path = DOC) -> str:
    found = re.search(re.escape(BEGIN) + "\n(.*?)\n" + re.escape(END), doc.read_text(encoding="utf-8"), re.S)
    return found.group(1) if found else ""


DOCS_DESIGN = Design(sims=500)
"""The design the docs quote (small enough for a test to run it again)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=Design().sims)
    parser.add_argument("--write-docs", action="store_true", help="Rewrite docs/statistics.md's figures.")
    args = parser.parse_args()
    design = DOCS_DESIGN if args.write_docs else Design(args.sims)
    started = time.perf_counter()
    text = table(*measure(design), design)
    print(text)
    print(f"\n{time.perf_counter() - started:.0f} s")
    if args.write_docs:
        write_docs(text)


if __name__ == "__main__":
    main()
