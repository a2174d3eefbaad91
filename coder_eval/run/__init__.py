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
"""

from coder_eval.experiment.inputs import RunInputs
from coder_eval.run.batch import BatchSummary, run_batch
from coder_eval.run.execute import Batch, Placement, Progress, Quiet
from coder_eval.run.finish import AfterRun, Finished
from coder_eval.run.reports import ReportOutcome
from coder_eval.run.result import RunResult, Totals
from coder_eval.run.session import Reaped, RunSession

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
