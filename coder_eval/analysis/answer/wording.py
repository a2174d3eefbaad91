"""How a comparison reads, in one place: every report, the explorer and the console word it alike.

Rates read in percent (differences in percentage points), amounts with three significant digits,
ratios as factors; the verdict's interval is the one printed beside the effect, with its method.

Example::

    comparison_line(compare(runs, "with_skill", "baseline"))
    # 'pass rate +33.3 pts [+0.0 pts, +66.7 pts] (95 %, inverted sign-flip test (exact)),
    #  p = 0.062: inconclusive'
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from coder_eval.analysis.stats.compare import Comparison
from coder_eval.analysis.stats.missingness import arms_text, counts_text

RATE_METRICS = ("passed", "score")
"""Metrics shown as percentages (their differences in percentage points)."""
VERDICTS = {"a_better": "{a} better", "b_better": "{b} better", "inconclusive": "inconclusive"}
NAMES = {
    "passed": "pass rate",
    "score": "score",
    "total_tokens": "tokens",
    "cost_usd": "cost",
    "duration_s": "duration",
    "num_turns": "turns",
    "n_tool_calls": "tool calls",
}


def metric_value(metric: str, value: float, signed: bool = False) -> str:
    """``metric_value("passed", 0.6667)`` -> ``'66.7%'``; amounts keep 3 significant digits; NaN -> ``'n/a'``.

    ``signed`` formats a difference: ``'+33.3 pts'`` for a rate, ``'+0.012'`` for an amount.
    """
    if pd.isna(value):
        return "n/a"
    if math.isinf(value):
        return ("+∞" if signed else "∞") if value > 0 else "-∞"
    sign = "+" if signed else ""
    if metric in RATE_METRICS:
        return f"{100 * value:{sign}.1f} pts" if signed else f"{100 * value:.1f}%"
    return f"{value:{sign}.3g}"


def ratio_value(value: float) -> str:
    """``ratio_value(1.0512)`` -> ``'×1.05'``; ``'×∞'`` for an unbounded end; NaN -> ``'n/a'``."""
    if pd.isna(value):
        return "n/a"
    return "×∞" if math.isinf(value) else f"×{value:.3g}"


def p_value_text(p: float) -> str:
    """``p_value_text(0.0625)`` -> ``'0.062'``; below 0.001 -> ``'< 0.001'``; NaN -> ``'n/a'``."""
    return "n/a" if pd.isna(p) else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def effect_text(c: Comparison) -> str:
    """The effect the verdict rests on: ``'+33.3 pts'``, ``'+0.29'`` or (amounts) ``'×1.05'``."""
    return ratio_value(c.ratio) if c.basis == "ratio" else metric_value(c.metric, c.diff, signed=True)


def interval_text(c: Comparison) -> str:
    """The verdict's interval on the effect's scale: ``'[+0.0 pts, +66.7 pts]'`` or ``'[×0.98, ×1.13]'``."""
    if c.basis == "ratio":
        return f"[{ratio_value(c.verdict_ci_low)}, {ratio_value(c.verdict_ci_high)}]"
    low, high = (metric_value(c.metric, x, signed=True) for x in (c.verdict_ci_low, c.verdict_ci_high))
    return f"[{low}, {high}]"


def verdict_text(c: Comparison) -> str:
    """``'with_skill better'``, ``'baseline better'`` or ``'inconclusive'`` (a is the candidate)."""
    return VERDICTS[c.verdict].format(a=c.a, b=c.b)


def level_text(c: Comparison) -> str:
    """``'95 %'``, or the Holm step's level (``'99.3 %'``)."""
    return f"{100 * c.verdict_confidence:.3g} %"


def p_text(c: Comparison) -> str:
    """``'p = 0.062'``, or with Holm ``'p = 0.012 (Holm 0.036)'`` when the verdict used the adjusted p."""
    p = p_value_text(c.p_value)
    text = f"p {p}" if p.startswith("<") else f"p = {p}"
    if c.verdict_confidence != c.confidence and not pd.isna(c.p_adjusted):
        text += f" (Holm {p_value_text(c.p_adjusted)})"
    return text


def comparison_line(c: Comparison) -> str:
    """One line: the metric, the effect, its interval and method, p, the verdict, and each arm's
    invalid episodes by cause with what they do to the verdict (when there are any).

    Example: ``'pass rate +33.3 pts [+0.0 pts, +66.7 pts] (95 %, inverted sign-flip test (exact)),
    p = 0.062: inconclusive'``
    """
    line = (
        f"{NAMES.get(c.metric, c.metric)} {effect_text(c)} {interval_text(c)} "
        f"({level_text(c)}, {c.verdict_method or 'no interval'}), {p_text(c)}: {verdict_text(c)}"
    )
    return "; ".join(part for part in (line, invalid_text(c), c.missingness) if part)


def invalid_text(c: Comparison) -> str:
    """``'invalid episodes excluded: with_skill 3 (provider 2, grader 1), baseline 0'``, or ``''``."""
    return arms_text(c.a, c.invalid_a, c.b, c.invalid_b)


def invalid_cell(c: Comparison) -> str:
    """A table cell: ``'3 (provider 2, grader 1) / 0'`` (a, then b)."""
    return f"{counts_text(c.invalid_a)} / {counts_text(c.invalid_b)}"


def verdict_cell(c: Comparison) -> str:
    """The verdict, and what the invalid episodes did to it when they did anything."""
    return f"{verdict_text(c)}{missingness_note(c)}"


def missingness_note(c: Comparison) -> str:
    """What the invalid episodes did to the verdict, as a parenthesis after it ('' when nothing)."""
    if c.missingness.startswith("not called"):
        return " (the invalid episodes could explain the difference)"
    if c.missingness:
        return " (survives the invalid episodes' worst case)"
    return ""


def verdict_rows(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """The comparisons as a table a person reads (a is the candidate, b the baseline): both means, the
    effect the verdict rests on with the verdict's interval, p, the verdict, tasks and method."""
    rows = []
    for c in comparisons:
        rows.append(
            {
                "metric": c.metric,
                f"baseline {c.b}": metric_value(c.metric, c.mean_b),
                f"candidate {c.a}": metric_value(c.metric, c.mean_a),
                "effect [verdict's interval]": f"{effect_text(c)} {interval_text(c)}",
                "level": level_text(c),
                "p": p_value_text(c.p_value),
                "verdict": verdict_cell(c),
                "tasks": int(c.n_tasks),
                f"invalid {c.a} / {c.b}": invalid_cell(c),
                "method": c.verdict_method,
            }
        )
    return pd.DataFrame(rows)


def mde_text(c: Comparison) -> str:
    """``'54.4 pts'``, ``'×1.19'``, or why there is none (``'n/a (planning needs 2 paired tasks)'``)."""
    value = c.mde_ratio if c.basis == "ratio" else c.mde
    if pd.isna(value):
        return f"n/a ({c.mde_note or 'undefined'})"
    return (
        ratio_value(value)
        if c.basis == "ratio"
        else metric_value(c.metric, value, signed=False).replace("%", " pts")
    )


def descriptive_text(c: Comparison) -> str:
    """Amounts on the ratio: the difference of means with its (descriptive) interval; else ``''``."""
    if c.basis != "ratio":
        return ""
    low, high = (metric_value(c.metric, x, signed=True) for x in (c.ci_low, c.ci_high))
    return f"{metric_value(c.metric, c.diff, signed=True)} [{low}, {high}]"


def metric_table(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """The compare report's table: one row per metric, the verdict's effect and interval, p, Holm p,
    the verdict, the MDE, and (amounts) the difference of means, descriptive."""
    rows = []
    for c in comparisons:
        rows.append(
            {
                "metric": c.metric,
                f"candidate {c.a}": metric_value(c.metric, c.mean_a),
                f"baseline {c.b}": metric_value(c.metric, c.mean_b),
                "effect": effect_text(c),
                "verdict's interval": f"{interval_text(c)} ({level_text(c)})",
                "on": c.basis,
                "p": p_value_text(c.p_value),
                "p (Holm)": p_value_text(c.p_adjusted),
                "p (invalid at worst)": "-" if pd.isna(c.p_worst) else p_value_text(c.p_worst),
                "verdict": verdict_cell(c),
                f"invalid {c.a} / {c.b}": invalid_cell(c),
                "MDE": mde_text(c),
                "min T": str(c.min_tasks) if c.min_tasks else "",
                "difference of means [descriptive]": descriptive_text(c),
            }
        )
    return pd.DataFrame(rows).set_index("metric") if rows else pd.DataFrame()
