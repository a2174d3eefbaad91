"""The stopping reason of a run ``--until-conclusive`` in words, as run.json, the console and the
reports say it.

Example::

    reason_text(record)
    # 'with_skill better than baseline after 18 of at most 80 tasks: the interval [+0.02, +0.41]
    #  excludes 0'
"""

from __future__ import annotations

from coder_eval.manifest import AdaptiveRecord, SequencePath

ATTEMPT_RUNS = 3
"""As ``adaptive.ATTEMPTS`` (the words say it; the scheduler enforces it)."""


def reason_text(record: AdaptiveRecord, unmeasured: str | None = None) -> str:
    """Why the run stopped: each decision metric's decision with its interval, or, undecided,
    what ended the run."""
    n, cap = record.decided_tasks, record.max_tasks
    told = f"after {n} of at most {cap} tasks"
    if record.stop == "decided":
        return "; ".join(_decided(record, path, told) for path in record.paths)
    why = _why(record, unmeasured)
    parts = [f"inconclusive {told} ({why})"]
    for path in record.paths:
        on = "" if len(record.paths) == 1 and path.metric == "passed" else f" on {path.metric}"
        parts.append(
            f"the interval{on} {interval_text(path)} holds 0 and reaches past ±{record.rule.delta:g}"
        )
    return ": ".join(parts[:1]) + (": " + "; ".join(parts[1:]) if parts[1:] else "")


def interval_text(path: SequencePath) -> str:
    """The last look's interval, ``[-1.00, +1.00]`` before any task counted."""
    if not path.looks:
        return "[-1.00, +1.00]"
    last = path.looks[-1]
    return f"[{last.low:+.2f}, {last.high:+.2f}]"


def _decided(record: AdaptiveRecord, path: SequencePath, told: str) -> str:
    on = "" if path.metric == "passed" else f" on {path.metric}"
    cand, base, delta = record.candidate, record.baseline, record.rule.delta
    if path.decision == "no_effect":
        return (
            f"no difference as large as {delta:g} between {cand} and {base}{on} {told}: the interval "
            f"{interval_text(path)} lies inside ±{delta:g}"
        )
    word = "better" if path.decision == "better" else "worse"
    return f"{cand} {word} than {base}{on} {told}: the interval {interval_text(path)} excludes 0"


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
    return f"task {record.blocked} stayed invalid after {ATTEMPT_RUNS} runs: it is never dropped"
