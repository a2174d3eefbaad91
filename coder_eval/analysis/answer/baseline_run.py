"""A run against a baseline run (regression gating): the same verdict engine as variants within a run.

Each variant of the run is paired with the baseline's variant of the same id (or, when each run has
one variant, with that one), on the tasks both ran **with the same content hash** (``run.json``'s
``task_hashes``: the task file and the files it names, not what the experiment adds). A task whose
content changed since the baseline is not paired, and the result says so; so are tasks only one run
has. The pair's episodes become the variants ``baseline`` and ``candidate`` of one frame, and
``verdicts`` computes the declared comparison on them, as it does for two variants of one run.

Example::

    found = against_baseline(load_runs("runs/latest"), load_runs("runs/main"), now_hashes, main_hashes)
    found.regressed              # True when a variant's primary metric is called worse
    found.arms[0].verdicts.line(), found.pairing.description
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

from coder_eval.analysis.answer.engine import Declaration, Verdicts, verdicts
from coder_eval.analysis.frames.load import Runs

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

    @property
    def called_worse(self) -> bool:
        """The primary metric is called worse than the baseline (never on an inconclusive result)."""
        primary = self.verdicts.primary
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
        arms=tuple(arms), unmatched=tuple(unmatched),
    )  # fmt: skip


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
