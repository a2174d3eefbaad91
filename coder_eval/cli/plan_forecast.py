"""``coder-eval plan``'s forecast: per variant, the expected tokens, cost and episode time from earlier
runs of the same tasks (and which), and with ``--until-conclusive`` the episodes a decision is likely
to take for a stated effect (``coder_eval.analysis.stats.forecast``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table

from coder_eval.cli.app import whole
from coder_eval.experiment import Resolution
from coder_eval.manifest import UntilConclusiveRule

HistoryOpt = Annotated[
    Path | None,
    typer.Option(
        help="Where earlier runs of the same tasks are looked for (the forecast's pilot; default runs/, "
        "or $RUNS_DIR)."
    ),
]
EffectOpt = Annotated[
    float | None,
    typer.Option(min=-1, max=1, help="With --until-conclusive: the effect to forecast for (default delta)."),
]
LABELS = {"total_tokens": "tokens", "cost_usd": "cost (USD)", "duration_s": "episode time (s, summed)"}


def forecast_table(resolution: Resolution, folder: Path) -> tuple[Table | None, float | None]:
    """The table (None: no earlier run of these tasks), and the mean cost of one episode over the
    variants (None: no earlier cost)."""
    from coder_eval.analysis.stats.earlier_runs import history

    seen = history(folder, set(resolution.task_ids))
    if not seen:
        return None, None
    from coder_eval.analysis.stats.forecast import spend  # SciPy: only with earlier runs to forecast from

    table = Table(
        whole("variant", resolution.experiment.variant_ids), "episodes", *LABELS.values(),
        whole("from", [r for arm in seen.values() for r in arm.runs]),
        title=f"forecast from earlier runs in {folder} (95 % predictive intervals)",
    )  # fmt: skip
    per_episode = []
    for variant in resolution.experiment.variant_ids:
        planned = sum(p.variant_id == variant for p in resolution.plans)
        planned_tasks = len({p.task.task_id for p in resolution.plans if p.variant_id == variant})
        arm = seen.get(variant)
        if arm is None:
            table.add_row(variant, str(planned), *["-"] * len(LABELS), "no earlier run of these tasks")
            continue
        cells, notes = [], set()
        for metric in LABELS:
            got = spend(arm, metric, planned, planned_tasks)
            cells.append("-" if got is None else f"{got.mean:.3g} [{got.low:.3g}, {got.high:.3g}]")
            if got is not None and got.note.startswith("approximate"):
                notes.add("interval approximate: few tasks seen")
            if metric == "cost_usd" and got is not None:
                per_episode.append(got.mean / planned)
        tasks = len(next(iter(arm.values.values()), {}))
        origin = f"{tasks} of {planned_tasks} tasks, from"
        table.add_row(variant, str(planned), *cells, "\n".join([origin, *sorted(arm.runs), *sorted(notes)]))
    return table, (float(np.mean(per_episode)) if per_episode else None)


def decision_lines(
    resolution: Resolution,
    rule: UntilConclusiveRule,
    effect: float | None,
    per_episode_usd: float | None,
    max_cost_usd: float | None,
) -> list[str]:
    """What ``--until-conclusive`` is likely to spend for ``effect`` (pass rates), in words."""
    from coder_eval.analysis.stats.forecast import episodes_to_decision
    from coder_eval.run.adaptive_words import rule_text

    repeats, arms = max(resolution.repeats.values()), len(resolution.experiment.variant_ids)
    cap = min(rule.max_tasks or len(resolution.task_ids), len(resolution.task_ids))
    effect = rule.delta if effect is None else effect
    stops = episodes_to_decision(effect, repeats, cap, rule.delta, arms=arms, seed=rule.seed or 0)
    lines = [
        f"until conclusive, for an effect of {effect:+.2f} on the pass rate (delta {rule.delta:g}, at most "
        f"{cap} tasks, {repeats} repeat(s)): decided in {stops.decided:.0%} of 200 simulated runs; episodes "
        f"to the stop: median {stops.median:.0f} (10-90 %: {stops.low:.0f}-{stops.high:.0f}) of at most "
        f"{cap * arms * repeats}"
    ]
    lines += fixed_lines(effect, stops.decided, float(np.mean(stops.episodes)), repeats, arms, rule.seed or 0)
    lines += [f"it decides {rule_text(metric, rule)}" for metric in rule.metrics]
    budget = max_cost_usd if max_cost_usd is not None else rule.max_cost_usd
    if per_episode_usd is not None:
        lines.append(
            f"at ${per_episode_usd:.3g} an episode (earlier runs): "
            f"${stops.median * per_episode_usd:.3g} at the median"
        )
        if budget is not None:
            reach = float(np.mean(stops.episodes * per_episode_usd <= budget))
            lines.append(f"a budget of ${budget:g} covers the run to its stop in {reach:.0%} of them")
    elif budget is not None:
        lines.append(f"no earlier cost of these tasks: whether ${budget:g} reaches a decision is not known")
    return lines


def fixed_lines(
    effect: float, power: float, expected: float, repeats: int, arms: int, seed: int
) -> list[str]:
    """When a fixed design is the cheaper choice for ``effect``: the one of the sequence's power, and
    the one of 80 % power (``stats.forecast.fixed_design``, the paired t test on the same
    simulated suites)."""
    from coder_eval.analysis.stats.forecast import fixed_design

    if effect == 0 or power <= 0.05:
        return []
    same, eighty = fixed_design(effect, power, repeats, seed), fixed_design(effect, 0.8, repeats, seed)
    cost = [d.episodes(repeats, arms) for d in (same, eighty)]
    said = (
        f"a fixed design of the same power ({same.power:.0%}) runs {same.tasks} tasks ({cost[0]} episodes); "
        f"of 80 % power, {eighty.tasks} tasks ({cost[1]} episodes); the sequence expects {expected:.0f}"
    )
    if cost[0] < expected:
        return [f"{said}: for this effect a fixed design is the cheaper choice"]
    if cost[1] < expected:
        return [f"{said}: if 80 % power is enough, a fixed design is the cheaper choice"]
    return [f"{said}: the sequence is the cheaper choice"]
