"""A run against a baseline run (regression gating): the same verdict engine as variants within a run.

Each variant of the run is paired with the baseline's variant of the same id (or, when each run has
one variant, with that one), on the tasks both ran **with the same content hash** (``run.json``'s
``task_hashes``: the task file and the files it names, not what the experiment adds). A task whose
content changed since the baseline is not paired, and the result says so; so are tasks only one run
has. The pair's episodes become the variants ``baseline`` and ``candidate`` of one frame, and
``verdicts`` computes the declared comparison on them, as it does for two variants of one run.

With several variants the gate is a family of tests (one per variant; the gate reads the primary
metric only): each variant's call is Holm-adjusted across them (``ArmRegression.gated``), so an A/A
run with many variants fails the gate no more often than one with a single variant.

Example::

    found = against_baseline(load_runs("runs/latest"), load_runs("runs/main"), now_hashes, main_hashes)
    found.regressed              # True when a variant's primary metric is called worse (Holm across them)
    found.arms[0].verdicts.line(), found.pairing.description
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple, cast

import numpy as np
import pandas as pd
from scipy import stats

from coder_eval.analysis.answer.engine import Declaration, Verdicts, verdicts
from coder_eval.analysis.frames.load import Runs
from coder_eval.analysis.stats.compare import Comparison, compare
from coder_eval.analysis.stats.estimate import Estimand
from coder_eval.analysis.stats.intervals import N_RESAMPLES, NAN, SEED
from coder_eval.analysis.stats.metrics import metric_values
from coder_eval.analysis.stats.multiplicity import holm_adjusted
from coder_eval.analysis.stats.power_model import LATTICE_MAX_DENOMINATOR, DifferenceModel

BASELINE, CANDIDATE = "baseline", "candidate"
"""The variant labels the two runs' episodes take in the compared frame."""


@dataclass(frozen=True)
class TaskPairing:
    """Which tasks pair across the two runs, and why the others do not."""

    paired: tuple[str, ...]
    changed: tuple[str, ...]
    """Same task id, another content hash: not paired."""
    only_baseline: tuple[str, ...]
    only_candidate: tuple[str, ...]
    unhashed: tuple[str, ...]
    """Paired, though one run recorded no content hash for them (a run made before hashes were kept)."""

    @property
    def description(self) -> str:
        """``'8 tasks paired; not paired: 1 changed since the baseline (t3)'``"""
        text = f"{len(self.paired)} tasks paired"
        left = [
            (self.changed, "changed since the baseline"),
            (self.only_candidate, "only in this run"),
            (self.only_baseline, "only in the baseline"),
        ]
        shown = [
            f"{len(ids)} {why} ({', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''})"
            for ids, why in left
            if ids
        ]
        if shown:
            text += "; not paired: " + "; ".join(shown)
        if self.unhashed:
            text += f"; {len(self.unhashed)} paired without a recorded content hash"
        return text


@dataclass(frozen=True)
class ArmRegression:
    """One variant of the run against its baseline variant."""

    variant_id: str
    baseline_variant: str
    verdicts: Verdicts
    changes: pd.DataFrame
    """Per paired task: task_id, baseline, candidate (pass rates), change; most changed first."""
    gated: Comparison | None = None
    """The primary metric as the gate reads it: Holm-adjusted across the variants when there are
    several (its verdict, p_adjusted and interval at the Holm step's level), else the primary itself."""

    @property
    def called_worse(self) -> bool:
        """The primary metric is called worse than the baseline, across the variants (never on an
        inconclusive result)."""
        primary = self.gated or self.verdicts.primary
        return primary is not None and primary.verdict == "b_better"

    @property
    def worse(self) -> pd.DataFrame:
        return self.changes[self.changes["change"] < 0]

    @property
    def better(self) -> pd.DataFrame:
        return self.changes[self.changes["change"] > 0].iloc[::-1]


@dataclass(frozen=True)
class Regression:
    """The run against its baseline, variant by variant."""

    candidate_run: str
    baseline_run: str
    pairing: TaskPairing
    arms: tuple[ArmRegression, ...]
    unmatched: tuple[str, ...] = ()
    """Variants of the run with no baseline variant to pair with."""

    @property
    def regressed(self) -> bool:
        """Some variant's primary metric is called worse."""
        return any(arm.called_worse for arm in self.arms)

    @property
    def nothing_paired(self) -> str | None:
        """Why nothing was compared, when no task pairs (no task in common, or every one changed)."""
        if self.pairing.paired:
            return None
        return f"nothing paired with baseline {self.baseline_run}: {self.pairing.description}"

    def lines(self) -> list[str]:
        """One line per variant, then the pairing."""
        if self.nothing_paired:
            return [self.nothing_paired]
        out = [f"{a.variant_id} vs baseline {self.baseline_run}: {a.verdicts.line()}" for a in self.arms]
        out += [f"{v}: no variant of the baseline run to pair with" for v in self.unmatched]
        return [*out, f"pairing: {self.pairing.description}"]


def pair_tasks(
    candidate: pd.DataFrame, baseline: pd.DataFrame, now: Mapping[str, str], then: Mapping[str, str]
) -> TaskPairing:
    """The tasks both frames ran, split by whether their content hash agrees."""
    ours, theirs = set(candidate["task_id"]), set(baseline["task_id"])
    both = sorted(ours & theirs)
    changed = tuple(t for t in both if now.get(t) and then.get(t) and now[t] != then[t])
    unhashed = tuple(t for t in both if not (now.get(t) and then.get(t)))
    return TaskPairing(
        paired=tuple(t for t in both if t not in changed),
        changed=changed,
        only_baseline=tuple(sorted(theirs - ours)),
        only_candidate=tuple(sorted(ours - theirs)),
        unhashed=unhashed,
    )


def against_baseline(
    candidate: Runs,
    baseline: Runs,
    candidate_hashes: Mapping[str, str],
    baseline_hashes: Mapping[str, str],
    declaration: Declaration = Declaration(),
) -> Regression:
    """Every variant of ``candidate`` against its baseline variant, on the paired tasks (none when
    no task pairs: ``nothing_paired`` says why)."""
    pairing = pair_tasks(candidate.episodes, baseline.episodes, candidate_hashes, baseline_hashes)
    if not pairing.paired:
        return Regression(run_id_of(candidate), run_id_of(baseline), pairing, ())
    ours = list(dict.fromkeys(candidate.episodes["variant_id"]))
    theirs = list(dict.fromkeys(baseline.episodes["variant_id"]))
    arms, unmatched = [], []
    for variant in ours:
        counterpart = variant if variant in theirs else (theirs[0] if len(ours) == len(theirs) == 1 else None)
        if counterpart is None:
            unmatched.append(variant)
            continue
        arms.append(arm(candidate, baseline, variant, counterpart, pairing.paired, declaration))
    return Regression(
        candidate_run=run_id_of(candidate), baseline_run=run_id_of(baseline), pairing=pairing,
        arms=tuple(holm_across(arms)), unmatched=tuple(unmatched),
    )  # fmt: skip


def holm_across(arms: list[ArmRegression]) -> list[ArmRegression]:
    """Each arm's primary comparison Holm-adjusted across the arms (``gate_family``)."""
    primaries = [a.verdicts.primary for a in arms]
    if any(p is None for p in primaries):
        return [replace(a, gated=p) for a, p in zip(arms, primaries, strict=True)]
    found = [p for p in primaries if p is not None]
    frames = [a.verdicts.selection.episodes for a in arms]
    d = arms[0].verdicts.declaration if arms else Declaration()
    adjusted = gate_family(found, frames, d.n_resamples, d.seed)
    return [replace(a, gated=c) for a, c in zip(arms, adjusted, strict=True)]


def gate_family(
    comparisons: list[Comparison],
    frames: list[pd.DataFrame],
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> list[Comparison]:
    """The regression gate's family: one comparison per variant (each on its own episodes), Holm-adjusted
    across them, each verdict's interval at its Holm step's level. One comparison is itself.

    Example: ``gate_family([compare(f, "candidate", "baseline") for f in frames], frames)``
    """
    if len(comparisons) < 2:
        return comparisons

    def at_level(c: Comparison, level: float) -> Comparison:
        frame = next(f for p, f in zip(comparisons, frames, strict=True) if p is c)
        estimand = cast(Estimand, c.estimand)
        return compare(frame, c.a, c.b, c.metric, 1 - level, n_resamples, seed, estimand, planned=False)

    return holm_adjusted(comparisons, at_level)


def arm(
    candidate: Runs, baseline: Runs, variant: str, counterpart: str, tasks: tuple[str, ...], d: Declaration
) -> ArmRegression:
    """One variant against its counterpart, through ``verdicts``."""
    frames = {}
    for name in ("episodes", "criteria"):
        sides = [
            labelled(getattr(baseline, name), counterpart, BASELINE, tasks),
            labelled(getattr(candidate, name), variant, CANDIDATE, tasks),
        ]
        frames[name] = pd.concat(sides, ignore_index=True)
    empty = candidate.tool_calls.iloc[0:0], candidate.messages.iloc[0:0]
    pair = Runs(frames["episodes"], frames["criteria"], *empty, run_dirs=candidate.run_dirs)
    found = verdicts(pair, replace(d, baseline=BASELINE, candidate=CANDIDATE))
    return ArmRegression(variant, counterpart, found, task_changes(frames["episodes"]))


def labelled(frame: pd.DataFrame, variant: str, label: str, tasks: tuple[str, ...]) -> pd.DataFrame:
    """The rows of one variant on the paired tasks, the variant renamed ``label``."""
    rows = frame[(frame["variant_id"] == variant) & frame["task_id"].isin(tasks)]
    return rows.assign(variant_id=label)


def task_changes(episodes: pd.DataFrame) -> pd.DataFrame:
    """Per task: each side's pass rate over its valid episodes and the change, most negative first."""
    valid = episodes[episodes["outcome"] != "invalid"]
    rates = valid.assign(passed=valid["passed"].astype(float)).pivot_table(
        index="task_id", columns="variant_id", values="passed", aggfunc="mean"
    )
    for side in (BASELINE, CANDIDATE):
        if side not in rates.columns:
            rates[side] = float("nan")
    table = rates[[BASELINE, CANDIDATE]].dropna().reset_index()
    table.columns.name = None
    table["change"] = table[CANDIDATE] - table[BASELINE]
    return table.sort_values(["change", "task_id"]).reset_index(drop=True)


def run_id_of(runs: Runs) -> str:
    """The run id of a one-run frame set (the ids joined when there are several)."""
    return "+".join(dict.fromkeys(map(str, runs.episodes["run_id"]))) or "(no episodes)"


class GatePlan(NamedTuple):
    """What ``--fail-on worse`` can see at a planned size, before the run (``gate_plan``)."""

    n_tasks: int
    """Planned tasks the baseline ran (the ones that can pair)."""
    repeats: int
    mde: float
    """The smallest drop in pass rate the gate calls with 80 % power (NaN: none at this size)."""


def gate_plan(baseline: pd.DataFrame, task_ids: Collection[str], repeats: int, seed: int = SEED) -> GatePlan:
    """The gate's MDE for a planned run of ``task_ids`` × ``repeats`` against the ``baseline`` episodes.

    The model of a run with no change: each task's pass probability is its baseline rate shrunk
    towards the baseline's pooled rate (c + p̄) / (n + 1); the run's task mean and the baseline's are
    independent binomial means of it, so their difference has a known distribution on the lattice of
    1 / lcm(K, K_baseline). Their mixture over the tasks (with one pseudo-task spread over every value,
    as a pilot is) is moved to each effect and the exact test simulated (``power_model``): approximate,
    as the rates are estimated. Example: ``gate_plan(found.runs.episodes, ["t1", "t2"], 1).mde``
    """
    valid = baseline[(baseline["outcome"] != "invalid") & baseline["task_id"].isin(list(task_ids))]
    passed = metric_values(valid, "passed")
    per_task = passed.groupby(valid["task_id"]).agg(["sum", "count"])
    if len(per_task) < 2:
        return GatePlan(len(per_task), repeats, NAN)
    pooled = float(passed.mean())
    rates = ((per_task["sum"] + pooled) / (per_task["count"] + 1)).to_numpy(float)
    theirs = int(per_task["count"].median())
    lcm = math.lcm(repeats, theirs)
    if lcm > LATTICE_MAX_DENOMINATOR:
        return GatePlan(len(per_task), repeats, NAN)
    weights = np.zeros(2 * lcm + 1)
    for rate in rates:
        ours, base = (
            stats.binom.pmf(np.arange(repeats + 1), repeats, rate),
            stats.binom.pmf(np.arange(theirs + 1), theirs, rate),
        )
        for i, p_i in enumerate(ours):
            np.add.at(
                weights, lcm + i * (lcm // repeats) - np.arange(theirs + 1) * (lcm // theirs), p_i * base
            )
    weights = (weights + 1.0 / len(weights)) / (len(rates) + 1)
    model = DifferenceModel(np.arange(-lcm, lcm + 1) / lcm, weights / weights.sum(), lcm, seed=seed)
    return GatePlan(len(per_task), repeats, model.mde(len(per_task)))
