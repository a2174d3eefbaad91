"""``coder-eval plan``'s forecast: per variant, the expected tokens, cost and episode time from earlier
runs of the same tasks (and which), and with ``--until-conclusive`` the episodes a decision is likely
to take for a stated effect (``coder_eval.analysis.stats.forecast``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table

from coder_eval.experiment import Resolution
from coder_eval.manifest import UntilConclusiveRule

HistoryOpt = Annotated[
    Path, typer.Option(help="Where earlier runs of the same tasks are looked for (the forecast's pilot).")
]
EffectOpt = Annotated[
    float | None,
    typer.Option(min=-1, max=1, help="With --until-conclusive: the effect to forecast for (default delta)."),
]
LABELS = {"total_tokens": "tokens", "cost_usd": "cost (USD)", "duration_s": "episode time (s, summed)"}


def forecast_table(resolution: Resolution, folder: Path) -> tuple[Table | None, float | None]:
    """The table (None: no earlier run of these tasks), and the mean cost of one episode over the
    variants (None: no earlier cost)."""
    from coder_eval.analysis.stats.forecast import history, spend

    seen = history(folder, set(resolution.task_ids))
    if not seen:
        return None, None
    table = Table(
        "variant", "episodes", *LABELS.values(), "from", title=f"forecast from earlier runs in {folder}"
    )
    per_episode = []
    for variant in resolution.experiment.variant_ids:
        planned = sum(p.variant_id == variant for p in resolution.plans)
        arm = seen.get(variant)
        if arm is None:
            table.add_row(variant, str(planned), *["-"] * len(LABELS), "no earlier run of these tasks")
            continue
        cells = []
        for metric in LABELS:
            got = spend(arm, metric, planned)
            cells.append("-" if got is None else f"{got.mean:.3g} [{got.low:.3g}, {got.high:.3g}]")
            if metric == "cost_usd" and got is not None:
                per_episode.append(got.mean / planned)
        tasks = len(next(iter(arm.values.values()), {}))
        table.add_row(variant, str(planned), *cells, f"{tasks} tasks of {', '.join(sorted(arm.runs))}")
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
