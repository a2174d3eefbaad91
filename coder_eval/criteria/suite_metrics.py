"""The metrics a suite threshold gates on, and how a task file names them.

Example (on a criterion, or under the task's ``suite_thresholds`` by criterion id or kind)::

    suite_thresholds: {accuracy: 0.8, recall.pdf: 0.9, completion_rate: 1.0}
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from coder_eval.errors import did_you_mean

SUITE_METRICS = (
    "pass_rate",
    "mean",
    "completion_rate",
    "accuracy",
    "macro_f1",
    "weighted_f1",
    "micro_f1",
    "recall",
    "precision",
    "f1",
)
"""Suite metrics; ``recall``, ``precision`` and ``f1`` also as ``recall.<label>`` (that label only)."""
LABEL_METRICS = ("recall", "precision", "f1")


def check_suite_metric(name: str) -> str:
    """A suite metric name: one of ``SUITE_METRICS``, or ``precision.<label>`` and the like."""
    head, dot, label = name.partition(".")
    if (name in SUITE_METRICS and not dot) or (head in LABEL_METRICS and dot and label.strip()):
        return name
    raise ValueError(
        f"unknown suite metric {name!r}{did_you_mean(name, SUITE_METRICS)}; use "
        f"{', '.join(SUITE_METRICS)}, or recall.<label>, precision.<label>, f1.<label>"
    )


SuiteMetric = Annotated[str, AfterValidator(check_suite_metric)]
"""A metric a suite threshold gates on (``docs/experiments.md``, Gates)."""
Threshold = Annotated[float, Field(ge=0, le=1)]
