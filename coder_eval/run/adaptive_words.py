"""The stopping reason of a run ``--until-conclusive`` in words, as run.json, the console and the
reports say it: each decision metric with its own decision and interval.

Pass rates and scores read as differences; amounts (cost, tokens, time, turns) as the candidate's
typical ratio to the baseline (the geometric mean of the per-task ratios, each capped at the rule's
``ratio_cap``), which is what their sequence decides on: "cheaper" means that ratio is below ×1.

Example::

    reason_text(record)
    # 'with_skill better than baseline after 18 of at most 80 tasks: the interval [+0.02, +0.41]
    #  excludes 0'
"""

from __future__ import annotations

from coder_eval.analysis.stats.sequential import ratio_of
from coder_eval.manifest import AdaptiveRecord, SequencePath, UntilConclusiveRule

ATTEMPT_RUNS = 3
"""As ``adaptive.ATTEMPTS`` (the words say it; the scheduler enforces it)."""
BOUNDED = frozenset({"passed", "score"})
AMOUNT_WORDS = {"better": "cheaper", "worse": "dearer"}
"""What better and worse mean for an amount (lower is better)."""


def reason_text(record: AdaptiveRecord, unmeasured: str | None = None) -> str:
    """Why the run stopped: each decision metric's own decision with its interval, and, when the run
    ended before every metric decided, what ended it."""
    n, cap = record.decided_tasks, record.max_tasks
    told = f"after {n} of at most {cap} tasks"
    if record.stop == "decided":
        return "; ".join(metric_reason(record, path, told) for path in record.paths)
    some = any(path.decision is not None for path in record.paths)
    head = "not every metric decided" if some else "inconclusive"
    return f"{head} {told} ({_why(record, unmeasured)}): " + "; ".join(
        metric_reason(record, path) for path in record.paths
    )


def metric_reason(record: AdaptiveRecord, path: SequencePath, told: str = "") -> str:
    """One metric's decision and the interval behind it (``told``: how far the run got)."""
    on = "" if path.metric == "passed" else f" on {path.metric}"
    cand, base = record.candidate, record.baseline
    when = f" {told}" if told else ""
    interval, zero, band = interval_text(path, record), null_text(path), band_text(path, record)
    if path.decision == "no_effect":
        return (
            f"no difference as large as {size_text(path, record)} between {cand} and {base}{on}{when}: "
            f"the interval {interval} lies inside {band}"
        )
    if path.decision in ("better", "worse"):
        word = path.decision if path.metric in BOUNDED else AMOUNT_WORDS[path.decision]
        return f"{cand} {word} than {base}{on}{when}: the interval {interval} excludes {zero}"
    past = f"reaches past {band}" if path.metric in BOUNDED else f"reaches outside {band}"
    return f"the interval{on} {interval} holds {zero} and {past}: undecided"


def interval_text(path: SequencePath, record: AdaptiveRecord | None = None) -> str:
    """The last look's interval: ``[-0.30, +0.40]`` (a difference), or for an amount the typical
    ratio ``[×0.62, ×1.10]``; the whole range before any task counted."""
    low, high = (path.looks[-1].low, path.looks[-1].high) if path.looks else (-1.0, 1.0)
    if path.metric in BOUNDED or record is None:
        return f"[{low:+.2f}, {high:+.2f}]"
    cap = record.rule.ratio_cap
    return f"[×{ratio_of(high, cap):.2f}, ×{ratio_of(low, cap):.2f}] (typical ratio, capped at ×{cap:g})"


def null_text(path: SequencePath) -> str:
    """What "no difference" is on the metric's scale: ``0`` or ``×1``."""
    return "0" if path.metric in BOUNDED else "×1"


def band_text(path: SequencePath, record: AdaptiveRecord) -> str:
    """The smallest effect that matters on the metric's scale: ``±0.2``, or ``×0.76 to ×1.32``."""
    delta, cap = record.rule.delta, record.rule.ratio_cap
    if path.metric in BOUNDED:
        return f"±{delta:g}"
    return f"×{ratio_of(delta, cap):.2f} to ×{ratio_of(-delta, cap):.2f}"


def size_text(path: SequencePath, record: AdaptiveRecord) -> str:
    """The smallest effect that matters, as a size: ``0.2``, or ``×1.32 either way``."""
    delta, cap = record.rule.delta, record.rule.ratio_cap
    return f"{delta:g}" if path.metric in BOUNDED else f"×{ratio_of(-delta, cap):.2f} either way"


def rule_text(metric: str, rule: UntilConclusiveRule) -> str:
    """What a decision on ``metric`` means, as ``plan`` says it before the run (the words the stop uses).

    Example: ``rule_text("cost_usd", rule)`` -> ``'on cost_usd: cheaper or dearer when the interval of the
    typical ratio (geometric mean of the per-task ratios, each capped at ×4) excludes ×1; no effect
    inside ×0.76 to ×1.32'``
    """
    if metric in BOUNDED:
        return (
            f"on {metric}: better or worse when the interval of the difference excludes 0; no effect "
            f"inside ±{rule.delta:g}"
        )
    low, high = ratio_of(rule.delta, rule.ratio_cap), ratio_of(-rule.delta, rule.ratio_cap)
    return (
        f"on {metric}: cheaper or dearer when the interval of the typical ratio (geometric mean of the "
        f"per-task ratios, each capped at ×{rule.ratio_cap:g}) excludes ×1; no effect inside "
        f"×{low:.2f} to ×{high:.2f}"
    )


def _why(record: AdaptiveRecord, unmeasured: str | None) -> str:
    rule = record.rule
    if record.stop == "all_tasks":
        return "every task ran"
    if record.stop == "max_tasks":
        return "the task cap"
    if record.stop == "max_episodes":
        return f"the budget of {rule.max_episodes} episodes"
    if record.stop == "max_cost_usd":
        return "the dollar budget"
    if record.stop == "regraded":
        ran = record.decided_tasks + len(record.in_flight)
        return (
            f"the run had stopped at its decision after {ran} tasks; the regraded verdicts do not "
            "decide on them, and no later task ran"
        )
    if unmeasured is not None:
        return f"task {record.blocked} has no {unmeasured} (a price unknown?): it cannot count"
    return f"the harness lost task {record.blocked}'s episodes {ATTEMPT_RUNS} times; a task is never dropped"
