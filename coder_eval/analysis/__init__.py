"""Analysis of coder_eval trajectories: frames, task-clustered statistics, paired comparisons, plots.

The task is the unit, variants are compared paired on tasks, invalid episodes are excluded and
counted, and every interval names its method (docs/statistics.md).

Example::

    from coder_eval.analysis import load_runs, summarize, compare, verdicts
    runs = load_runs("runs/latest")
    summarize(runs.episodes)
    compare(runs, "candidate", "baseline").verdict       # on the run's headline tasks
    verdicts(runs).line()                                # the declared comparison, every metric

This package is the one import surface of the analysis: notebooks import from it alone. Its layers
are sub-packages, each importing only those before it: ``frames`` (trajectories and Inspect logs
into frames), ``stats`` (the statistics proper), ``judging`` (judge agreement and calibration),
``answer`` (the run's one answer and its wording) and ``views`` (what notebooks and the explorer
show). Names resolve on first use, so importing one layer (the run store reads ``frames``) does not
import the statistics stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coder_eval.lazy import lazy_names

if TYPE_CHECKING:
    from coder_eval.analysis.answer.engine import Declaration, Verdicts, headline, verdicts
    from coder_eval.analysis.frames.load import Runs, load_runs
    from coder_eval.analysis.judging.agreement import evaluation_cost, judge_agreement, judge_votes
    from coder_eval.analysis.stats.classification import Classification, classification
    from coder_eval.analysis.stats.compare import Comparison, compare, comparisons_frame
    from coder_eval.analysis.stats.cost import cost_per_resolved
    from coder_eval.analysis.stats.estimate import Estimate
    from coder_eval.analysis.stats.flips import flips
    from coder_eval.analysis.stats.headline_tasks import TaskSelection, headline_tasks
    from coder_eval.analysis.stats.intervals import Interval, wilson_interval
    from coder_eval.analysis.stats.metrics import higher_is_better
    from coder_eval.analysis.stats.missingness import invalid_counts
    from coder_eval.analysis.stats.multiplicity import compare_all, compare_metrics
    from coder_eval.analysis.stats.passk import pass_at_k, pass_at_k_table, pass_hat_k
    from coder_eval.analysis.stats.power import mde, power_at, required_tasks, variance_parts
    from coder_eval.analysis.stats.summary import suite_rollups, summarize
    from coder_eval.analysis.stats.tool_usage import frequent_calls, frequent_errors, tool_usage

LAZY: dict[str, str] = {
    "Declaration": "coder_eval.analysis.answer.engine",
    "Verdicts": "coder_eval.analysis.answer.engine",
    "headline": "coder_eval.analysis.answer.engine",
    "verdicts": "coder_eval.analysis.answer.engine",
    "TaskSelection": "coder_eval.analysis.stats.headline_tasks",
    "headline_tasks": "coder_eval.analysis.stats.headline_tasks",
    "Runs": "coder_eval.analysis.frames.load",
    "load_runs": "coder_eval.analysis.frames.load",
    "evaluation_cost": "coder_eval.analysis.judging.agreement",
    "judge_agreement": "coder_eval.analysis.judging.agreement",
    "judge_votes": "coder_eval.analysis.judging.agreement",
    "Classification": "coder_eval.analysis.stats.classification",
    "classification": "coder_eval.analysis.stats.classification",
    "Comparison": "coder_eval.analysis.stats.compare",
    "compare": "coder_eval.analysis.stats.compare",
    "comparisons_frame": "coder_eval.analysis.stats.compare",
    "cost_per_resolved": "coder_eval.analysis.stats.cost",
    "Estimate": "coder_eval.analysis.stats.estimate",
    "flips": "coder_eval.analysis.stats.flips",
    "Interval": "coder_eval.analysis.stats.intervals",
    "wilson_interval": "coder_eval.analysis.stats.intervals",
    "higher_is_better": "coder_eval.analysis.stats.metrics",
    "invalid_counts": "coder_eval.analysis.stats.missingness",
    "compare_all": "coder_eval.analysis.stats.multiplicity",
    "compare_metrics": "coder_eval.analysis.stats.multiplicity",
    "pass_at_k": "coder_eval.analysis.stats.passk",
    "pass_at_k_table": "coder_eval.analysis.stats.passk",
    "pass_hat_k": "coder_eval.analysis.stats.passk",
    "mde": "coder_eval.analysis.stats.power",
    "power_at": "coder_eval.analysis.stats.power",
    "required_tasks": "coder_eval.analysis.stats.power",
    "variance_parts": "coder_eval.analysis.stats.power",
    "summarize": "coder_eval.analysis.stats.summary",
    "suite_rollups": "coder_eval.analysis.stats.summary",
    "frequent_calls": "coder_eval.analysis.stats.tool_usage",
    "frequent_errors": "coder_eval.analysis.stats.tool_usage",
    "tool_usage": "coder_eval.analysis.stats.tool_usage",
}
"""The public names (``__all__``), each imported from its module on first use."""

VIEWS: dict[str, str] = {
    "plots": "coder_eval.analysis.views",
    "Explorer": "coder_eval.analysis.views.widgets",
    "html_table": "coder_eval.analysis.views.notebook",
    "load_report_runs": "coder_eval.analysis.views.notebook",
    "budget_stops": "coder_eval.analysis.views.notebook",
    "md_text": "coder_eval.analysis.views.notebook",
    "readable": "coder_eval.analysis.views.notebook",
    "show_scripted_banner": "coder_eval.analysis.views.notebook",
    "trajectory_links": "coder_eval.analysis.views.notebook",
    "write_summary": "coder_eval.analysis.views.notebook",
    "token_buckets_plot": "coder_eval.analysis.views.notebook",
    "MIN_TASKS": "coder_eval.analysis.stats.amounts",
    "planning": "coder_eval.analysis.answer.planning",
    "REPORT_METRICS": "coder_eval.analysis.answer.engine",
    "metric_table": "coder_eval.analysis.answer.wording",
    "p_value_text": "coder_eval.analysis.answer.wording",
    "verdict_text": "coder_eval.analysis.answer.wording",
    "NOT_VALID_AFTER_STOPPING": "coder_eval.analysis.views.sequential_report",
    "plot_sequence": "coder_eval.analysis.views.sequential_report",
    "saved_text": "coder_eval.analysis.views.sequential_report",
    "stopping": "coder_eval.analysis.views.sequential_report",
    "criterion_changes": "coder_eval.analysis.answer.changes",
    "outcome_changes": "coder_eval.analysis.answer.changes",
    "regraded_source": "coder_eval.analysis.answer.changes",
    "counts_text": "coder_eval.analysis.stats.missingness",
    "invalid_causes": "coder_eval.analysis.stats.missingness",
}
"""What the report notebooks and the explorer use besides the public names (``plots`` is a module)."""


if not TYPE_CHECKING:  # for the type checker the names are the imports above
    __getattr__, __dir__ = lazy_names(__name__, globals(), {**LAZY, **VIEWS})


__all__ = [
    "Classification",
    "Comparison",
    "Declaration",
    "Estimate",
    "Interval",
    "Runs",
    "TaskSelection",
    "Verdicts",
    "classification",
    "compare",
    "compare_all",
    "compare_metrics",
    "comparisons_frame",
    "cost_per_resolved",
    "evaluation_cost",
    "flips",
    "frequent_calls",
    "frequent_errors",
    "headline",
    "headline_tasks",
    "higher_is_better",
    "invalid_counts",
    "judge_agreement",
    "judge_votes",
    "load_runs",
    "mde",
    "pass_at_k",
    "pass_at_k_table",
    "pass_hat_k",
    "power_at",
    "required_tasks",
    "suite_rollups",
    "summarize",
    "tool_usage",
    "variance_parts",
    "verdicts",
    "wilson_interval",
]
