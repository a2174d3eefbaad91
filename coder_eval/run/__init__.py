"""A run as a library object: ``RunSession`` creates (or reopens) a run, executes it, finishes it.

Example::

    from coder_eval.run import AfterRun, Batch, RunInputs, RunSession

    with RunSession.create(RunInputs(paths=["tasks/demo"]), Path("runs/demo")) as session:
        session.execute(Batch(jobs=2))
        result = session.finish(AfterRun(min_pass_rate=0.5, report=False))
    result.exit_code          # what `coder-eval run` would exit with

``batch`` runs a batch of episodes on an executor; ``execute`` wraps it with the run's status,
budget and interruption; ``finish`` does the headline, gates, JUnit and reports; ``result`` decides
the exit code. See docs/python-api.md.

Names resolve on first use, so a module of the run (``coder_eval.run.summary``, which the console
reads) imports without the session, the executors and the episode runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coder_eval.lazy import lazy_names

if TYPE_CHECKING:
    from coder_eval.experiment.inputs import RunInputs
    from coder_eval.run.batch import BatchSummary, run_batch
    from coder_eval.run.execute import Batch, Placement, Progress, Quiet
    from coder_eval.run.finish import AfterRun, Finished
    from coder_eval.run.reports import ReportOutcome
    from coder_eval.run.result import RunResult, Totals
    from coder_eval.run.session import Reaped, RunSession

LAZY: dict[str, str] = {
    "RunInputs": "coder_eval.experiment.inputs",
    "BatchSummary": "coder_eval.run.batch",
    "run_batch": "coder_eval.run.batch",
    "Batch": "coder_eval.run.execute",
    "Placement": "coder_eval.run.execute",
    "Progress": "coder_eval.run.execute",
    "Quiet": "coder_eval.run.execute",
    "AfterRun": "coder_eval.run.finish",
    "Finished": "coder_eval.run.finish",
    "ReportOutcome": "coder_eval.run.reports",
    "RunResult": "coder_eval.run.result",
    "Totals": "coder_eval.run.result",
    "Reaped": "coder_eval.run.session",
    "RunSession": "coder_eval.run.session",
}
"""Each public name and the module it is imported from on first use."""

if not TYPE_CHECKING:  # for the type checker the names are the imports above
    __getattr__, __dir__ = lazy_names(__name__, globals(), LAZY)


__all__ = [
    "AfterRun",
    "Batch",
    "BatchSummary",
    "Finished",
    "Placement",
    "Progress",
    "Quiet",
    "Reaped",
    "ReportOutcome",
    "RunInputs",
    "RunResult",
    "RunSession",
    "Totals",
    "run_batch",
]
