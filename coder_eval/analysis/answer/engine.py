"""One answer per run: the comparison a run declares, computed once and read by every surface.

A run (or a set of runs) has one declared comparison (``Declaration``):

- the pair: the candidate against the baseline (default: the variant named ``baseline``, else the
  experiment's first, against the first other variant);
- the headline tasks: the graded tasks, narrowed by the experiment's ``compare:`` block recorded in
  run.json (``selection.headline_tasks``); classification-only tasks (the rows of a trigger dataset)
  are left out and scored as classifications;
- the metrics (every report metric; ``passed`` is the primary one) and, per metric, the test and the
  interval that inverts it (``compare``);
- the multiplicity rule across the metrics: ``none`` (each metric on its own) or ``holm``.

``verdicts(runs)`` computes it; the compare, run and classification reports, their summary.json,
the explorer, ``compare(runs, ...)``, the console's end-of-run line, JUnit and the gates all read
that one record, so they say the same tasks, effect, interval, p and verdict.

Example::

    v = verdicts(load_runs("runs/latest"))
    v.primary.verdict, v.line()
    v.frame()                 # one row per metric, as the reports and summary.json show them
    headline("runs/latest")   # the same, from a run directory, as the console prints it
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import pandas as pd

from coder_eval.analysis.answer.wording import comparison_line
from coder_eval.analysis.frames.load import Runs, load_runs
from coder_eval.analysis.stats.compare import Comparison, compare, comparisons_frame
from coder_eval.analysis.stats.estimate import Estimand
from coder_eval.analysis.stats.headline_tasks import TaskSelection, headline_of, recorded_variants
from coder_eval.analysis.stats.intervals import N_RESAMPLES, SEED
from coder_eval.analysis.stats.multiplicity import UNADJUSTED, holm, holm_adjusted, recompute
from coder_eval.errors import AnalysisError, unknown_name

REPORT_METRICS = ("passed", "score", "total_tokens", "cost_usd", "duration_s", "num_turns", "n_tool_calls")
"""The metrics every report shows, in order; the first is the primary one."""
Adjust = Literal["none", "holm"]
ADJUSTMENTS = ("none", "holm")


@dataclass(frozen=True)
class Declaration:
    """What is compared, fixed before any number is computed.

    ``tags`` / ``exclude_tags`` replace the experiment's ``compare:`` block when given (``None``: the
    block recorded in run.json); ``classification=True`` pools the classification-only tasks too.
    Example: ``Declaration(candidate="with_skill", adjust="holm")``
    """

    baseline: str = ""
    candidate: str = ""
    metrics: tuple[str, ...] = REPORT_METRICS
    adjust: Adjust = "none"
    estimand: Estimand = "population"
    tags: tuple[str, ...] | None = None
    exclude_tags: tuple[str, ...] | None = None
    classification: bool = False
    n_resamples: int = N_RESAMPLES
    seed: int = SEED


@dataclass(frozen=True)
class Verdicts:
    """The declared comparison, computed: one ``Comparison`` per metric on the headline tasks.

    ``note`` says why there is no comparison when ``comparisons`` is empty (one variant, no
    headline task). Example: ``verdicts(runs).primary.verdict_ci_low``
    """

    declaration: Declaration
    baseline: str
    candidate: str
    selection: TaskSelection
    comparisons: tuple[Comparison, ...]
    note: str = ""

    @property
    def available(self) -> bool:
        """True when the runs have a comparison to show."""
        return bool(self.comparisons)

    @property
    def primary(self) -> Comparison | None:
        """The first metric's comparison (the pass rate, unless declared otherwise)."""
        return self.comparisons[0] if self.comparisons else None

    def of(self, metric: str) -> Comparison:
        """The comparison on ``metric``."""
        for c in self.comparisons:
            if c.metric == metric:
                return c
        raise AnalysisError(
            f"the declared comparison has no metric {metric!r} ({', '.join(self.declaration.metrics)})"
        )

    def frame(self) -> pd.DataFrame:
        """One row per metric (``comparisons_frame``), with the adjustment the verdicts used."""
        frame = comparisons_frame(list(self.comparisons))
        frame["adjust"] = self.declaration.adjust
        frame["ci_adjustment"] = UNADJUSTED
        return frame

    def line(self, metric: str | None = None) -> str:
        """The headline in one line, as the console prints it.

        Example: ``'with_skill vs baseline, 8 tasks: pass rate +33.3 pts [+0.0 pts, +66.7 pts] (95 %,
        inverted sign-flip test (exact)), p = 0.062: inconclusive'``
        """
        if not self.available:
            pair = f"{self.candidate} vs {self.baseline}: " if self.candidate and self.baseline else ""
            return f"{pair}no comparison: {self.note}"
        c = self.of(metric) if metric else self.primary
        assert c is not None
        return f"{self.candidate} vs {self.baseline}, {c.n_tasks} tasks: {comparison_line(c)}"

    def headline(self) -> dict[str, Any]:
        """The primary comparison as plain data (summary.json, run.json, JUnit): the same tasks, effect,
        interval, p and verdict on every surface."""
        c = self.primary
        base = {"available": self.available, "baseline": self.baseline, "candidate": self.candidate,
                "tasks": self.selection.tasks, "selection": self.selection.description,
                "adjust": self.declaration.adjust, "line": self.line(), "note": self.note}  # fmt: skip
        if c is None:
            return base
        return base | {
            "metric": c.metric, "n_tasks": c.n_tasks, "basis": c.basis,
            "effect": c.ratio if c.basis == "ratio" else c.diff, "diff": c.diff,
            "verdict_ci_low": c.verdict_ci_low, "verdict_ci_high": c.verdict_ci_high,
            "verdict_method": c.verdict_method, "verdict_confidence": c.verdict_confidence,
            "p_value": c.p_value, "p_adjusted": c.p_adjusted, "test": c.test, "verdict": c.verdict,
            "invalid_candidate": c.invalid_a, "invalid_baseline": c.invalid_b, "p_worst": c.p_worst,
            "missingness": c.missingness,
        }  # fmt: skip


def verdicts(runs: Runs, declaration: Declaration = Declaration()) -> Verdicts:
    """Compute the declared comparison of ``runs`` once.

    Example: ``verdicts(load_runs("runs/latest"), Declaration(adjust="holm")).frame()``
    """
    if declaration.adjust not in ADJUSTMENTS:
        raise AnalysisError(f"adjust must be 'none' or 'holm' (got {declaration.adjust!r})")
    d = declaration
    chosen = headline_of(runs, d.tags, d.exclude_tags, d.classification)
    order = recorded_variants(runs.run_dirs)
    baseline, candidate, why = pick_variants(
        runs.episodes, declaration.baseline, declaration.candidate, order
    )
    empty = Verdicts(declaration, baseline, candidate, chosen, ())
    if why:
        return replace(empty, note=why)
    pair = chosen.episodes[chosen.episodes["variant_id"].isin([baseline, candidate])]
    if set(pair["variant_id"]) != {baseline, candidate}:
        return replace(empty, note=no_tasks_note(chosen))
    found = [
        compare(
            chosen.episodes,
            candidate,
            baseline,
            m,
            n_resamples=d.n_resamples,
            seed=d.seed,
            estimand=d.estimand,
        )
        for m in d.metrics
    ]
    if found[0].n_tasks == 0:
        return replace(empty, note=no_tasks_note(chosen))
    return replace(empty, comparisons=tuple(adjusted(found, chosen.episodes, d)))


def adjusted(found: list[Comparison], episodes: pd.DataFrame, d: Declaration) -> list[Comparison]:
    """Holm across the metrics: its p-values always shown, its verdicts (and their intervals at the
    Holm steps' levels) when the declaration says so."""
    if d.adjust == "holm":
        return holm_adjusted(found, recompute(episodes, d.n_resamples, d.seed))
    return [replace(c, p_adjusted=p) for c, p in zip(found, holm([c.p_verdict for c in found]), strict=True)]


def pick_variants(
    episodes: pd.DataFrame, baseline: str = "", candidate: str = "", order: Sequence[str] = ()
) -> tuple[str, str, str]:
    """(baseline, candidate, why not): names given are kept (and checked); a blank baseline is the
    variant named ``baseline``, else the first, and a blank candidate the first other, in ``order``
    (the experiment's, from run.json) and then as the episodes list them; ``why`` says why there is
    no pair.

    Example: ``pick_variants(runs.episodes)`` -> ``("baseline", "with_skill", "")``
    """
    seen = [str(v) for v in episodes["variant_id"]]
    variants = list(dict.fromkeys([*(v for v in order if v in set(seen)), *seen]))
    for name in (baseline, candidate):
        if name and name not in variants:
            raise AnalysisError(unknown_name("variant", name, variants))
    if not variants:
        return "", "", "the runs have no episodes"
    base = baseline or ("baseline" if "baseline" in variants else variants[0])
    cand = candidate or next((v for v in variants if v != base), "")
    if not cand:
        return base, "", f"the runs have one variant ({base!r}): there is nothing to compare it with"
    if cand == base:
        raise AnalysisError(f"a comparison needs two different variants (got {base!r} twice)")
    return base, cand, ""


def no_tasks_note(chosen: TaskSelection) -> str:
    """Why the headline has no task both variants ran."""
    if not chosen.tasks and chosen.classification_tasks:
        return (
            f"every task is a classification item ({len(chosen.classification_tasks)} classification-only "
            "tasks): they are scored as classifications, not pooled into a pass-rate headline"
        )
    return f"no headline task has a valid episode in both variants ({chosen.description})"


def headline(
    run_dirs: str | os.PathLike[str] | list[str | os.PathLike[str]], declaration: Declaration = Declaration()
) -> Verdicts:
    """``verdicts`` of run directories, loading them quietly (load warnings are the caller's to show).

    Example: ``headline("runs/latest").line()``
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = load_runs(run_dirs)
    return verdicts(runs, declaration)
