"""A run that stopped at its answer, as the reports show it: the confidence sequence over tasks (a
plot of the interval narrowing), the stopping reason in words, and the episodes saved against the
fixed design that runs every task up to the cap.

Example::

    record = stopping(runs.run_dirs)           # None: no run of these stopped at its answer
    sequence_frame(record)                     # one row per look and decision metric
    plot_sequence(record); saved_text(record)  # '28 episodes where the fixed design of 60 tasks runs 120 ...'
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from coder_eval.errors import ManifestError
from coder_eval.manifest import AdaptiveRecord, read_manifest

NOT_VALID_AFTER_STOPPING = (
    "This run stopped at its answer (--until-conclusive): the fixed-design intervals, p-values and MDEs "
    "below are not valid under optional stopping (too narrow, and the effect at the stop is biased away "
    "from 0). The confidence sequence above is the interval to quote."
)


def stopping(run_dirs: Iterable[str | os.PathLike[str]]) -> AdaptiveRecord | None:
    """The ``adaptive`` record of the first run that has one (``run.json``), else None."""
    for run in run_dirs:
        try:
            record = read_manifest(Path(run)).adaptive
        except ManifestError:
            continue
        if record is not None:
            return record
    return None


def sequence_frame(record: AdaptiveRecord) -> pd.DataFrame:
    """One row per look and decision metric: ``look`` (1, 2, ...), ``task_id``, ``value`` (the
    task's observation), ``low``, ``high``."""
    rows = [
        {"metric": path.metric, "look": i + 1, **look.model_dump()}
        for path in record.paths
        for i, look in enumerate(path.looks)
    ]
    return pd.DataFrame(rows, columns=["metric", "look", "task_id", "value", "low", "high"])


def saved_text(record: AdaptiveRecord) -> str:
    """The episodes the tasks that ran planned, against the fixed design of every task to the cap."""
    ran = (record.decided_tasks + len(record.in_flight)) * record.episodes_per_task
    fixed = record.max_tasks * record.episodes_per_task
    share = 1 - ran / fixed if fixed else 0.0
    flight = (
        f" ({len(record.in_flight)} task(s) running at the stop, kept, not deciding)"
        if record.in_flight
        else ""
    )
    return (
        f"{ran} episodes{flight} where the fixed design of all {record.max_tasks} tasks runs {fixed}: "
        f"{share:.0%} saved"
    )


def plot_sequence(record: AdaptiveRecord, ax: Any = None) -> Any:
    """The interval after each task (a band), the observations, 0 and ±delta, and the stop."""
    import matplotlib.pyplot as plt

    frame = sequence_frame(record)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.2))
    for path in record.paths:
        part = frame[frame.metric == path.metric]
        ax.fill_between(
            part.look, part.low, part.high, alpha=0.25, step="post", label=f"{path.metric}: 95 % CS"
        )
        ax.plot(part.look, part.value.expanding().mean(), lw=1, label=f"{path.metric}: mean so far")
    delta = record.rule.delta
    ax.axhline(0, color="black", lw=0.8)
    for edge in (-delta, delta):
        ax.axhline(edge, color="grey", lw=0.8, ls="--")
    if record.decided_tasks:
        ax.axvline(record.decided_tasks, color="tab:red", lw=0.8, ls=":", label=f"stop ({record.stop})")
    ax.set(
        xlim=(1, max(record.max_tasks, 2)),
        ylim=(-1, 1),
        xlabel=f"tasks completed (of at most {record.max_tasks})",
        ylabel=scale_label(record),
        title="Confidence sequence over tasks",
    )
    ax.legend(loc="lower right", fontsize="small")
    return ax


def scale_label(record: AdaptiveRecord) -> str:
    """What the plot's vertical axis is: the difference, or for amounts the capped log ratio."""
    if all(path.metric in ("passed", "score") for path in record.paths):
        return f"{record.candidate} − {record.baseline}"
    return f"difference; amounts: log(baseline / candidate) / log {record.rule.ratio_cap:g}"


def sequence_views(run_dirs: Iterable[str | os.PathLike[str]]) -> tuple[dict[str, Any], ...]:
    """The explorer's view of a run that stopped at its answer: the reason, what it saved, the plot
    and the note on fixed-design intervals (a line saying so for other runs)."""
    import html

    from matplotlib.figure import Figure

    from coder_eval.analysis.views.explorer import figure_output, html_output

    record = stopping(run_dirs)
    if record is None:
        return (html_output("<div>Not a run that stopped at its answer (a fixed design).</div>"),)
    figure = Figure(figsize=(7, 3.2), layout="constrained")
    plot_sequence(record, figure.subplots())
    text = f"<div><b>Stopped:</b> {html.escape(record.reason)}. {html.escape(saved_text(record))}.</div>"
    note = f"<div>Note: {html.escape(NOT_VALID_AFTER_STOPPING)}</div>"
    return html_output(text), figure_output(figure), html_output(note)
