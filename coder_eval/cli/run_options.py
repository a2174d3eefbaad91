"""Options of ``coder-eval run`` alone (those it shares with ``plan`` are in ``cli/inputs.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

SnapshotsOpt = Annotated[
    bool, typer.Option(help="Keep each episode's final workspace in the run directory (for regrade).")
]
SnapshotMaxOpt = Annotated[
    float, typer.Option(min=0.001, help="Per-episode cap on a kept snapshot, MB compressed.")
]
RequireAllPassOpt = Annotated[
    bool,
    typer.Option(help="Smoke test: exit 1 unless every episode passed (a fail or an invalid one fails it)."),
]
ExecutorOpt = Annotated[
    str, typer.Option(help="Where episodes run: local (this process) or dask (docs/executors.md).")
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(help="With --executor dask: a running cluster (tcp://HOST:PORT), not a LocalCluster."),
]
JobsOpt = Annotated[
    int,
    typer.Option("-j", "--jobs", min=1, help="Episodes run at once (dask: LocalCluster workers)."),
]
RunDirOpt = Annotated[Path | None, typer.Option(help="This run's directory (default runs/<run_id>).")]
ResumeOpt = Annotated[bool, typer.Option(help="Finish an interrupted run (default runs/latest).")]
ReplanOpt = Annotated[
    bool, typer.Option(help="With --resume: run again the finished episodes whose task has changed.")
]
RetryInvalidOpt = Annotated[
    bool, typer.Option(help="With --resume: run again every invalid episode (provider, agent, grader).")
]
MaxCostOpt = Annotated[
    float | None, typer.Option(min=0, help="Stop launching episodes once this many dollars are spent.")
]
MinPassRateOpt = Annotated[
    float | None, typer.Option(min=0, max=1, help="Gate: each variant's pass rate at least X.")
]
JunitXmlOpt = Annotated[Path | None, typer.Option(help="Write JUnit XML here (one case per episode).")]
ReportOpt = Annotated[bool, typer.Option(help="Render the reports after the run.")]
