"""Analysis of coder_eval trajectories: frames, task-clustered statistics, paired comparisons, plots.

The task is the unit, variants are compared paired on tasks, invalid episodes are excluded and
counted, and every interval names its method (docs/statistics.md).

Example::

    from coder_eval.analysis import load_runs, summarize, compare, verdicts
    runs = load_runs("runs/latest")
    summarize(runs.episodes)
    compare(runs, "candidate", "baseline").verdict       # on the run's headline tasks
    verdicts(runs).line()                                # the declared comparison, every metric
"""

from coder_eval.analysis.agreement import evaluation_cost, judge_agreement, judge_votes
from coder_eval.analysis.classification import Classification, classification
from coder_eval.analysis.compare import Comparison, compare, comparisons_frame
from coder_eval.analysis.cost import cost_per_resolved
from coder_eval.analysis.estimate import Estimate
from coder_eval.analysis.flips import flips
from coder_eval.analysis.intervals import Interval, wilson_interval
from coder_eval.analysis.load import Runs, load_runs
from coder_eval.analysis.metrics import higher_is_better
from coder_eval.analysis.missingness import invalid_counts
from coder_eval.analysis.multiplicity import compare_all, compare_metrics
from coder_eval.analysis.passk import pass_at_k, pass_at_k_table, pass_hat_k
from coder_eval.analysis.power import mde, power_at, required_tasks, variance_parts
from coder_eval.analysis.selection import TaskSelection, headline_tasks
from coder_eval.analysis.summary import summarize
from coder_eval.analysis.tools import frequent_calls, frequent_errors, tool_usage
from coder_eval.analysis.verdicts import Declaration, Verdicts, headline, verdicts

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
    "summarize",
    "tool_usage",
    "variance_parts",
    "verdicts",
    "wilson_interval",
]
