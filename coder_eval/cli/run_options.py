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

# --- until conclusive (docs/experiments.md "Stopping at the answer") ---------------------------------
UntilConclusiveOpt = Annotated[
    bool | None,
    typer.Option(
        "--until-conclusive/--fixed-design",
        help="Run tasks in a random order until the comparison is decided (default: as the experiment's "
        "until_conclusive block says); --fixed-design runs every task even so.",
        show_default=False,
    ),
]
DeltaOpt = Annotated[
    float | None,
    typer.Option(min=0, max=1, help="With --until-conclusive: the smallest difference that matters (0.2)."),
]
DecideOnOpt = Annotated[
    list[str] | None,
    typer.Option(help="With --until-conclusive: a decision metric (repeat for several; default passed)."),
]
MaxTasksOpt = Annotated[
    int | None, typer.Option(min=1, help="With --until-conclusive: at most this many tasks.")
]
MaxEpisodesOpt = Annotated[
    int | None, typer.Option(min=1, help="With --until-conclusive: at most this many episodes.")
]
# the run store and regression gating (docs/ci.md)
RawEventsOpt = Annotated[
    bool,
    typer.Option(
        "--raw-events",
        help="Log every raw event each agent CLI emits to raw/<episode>.jsonl in the run directory, for "
        "debugging an agent integration (the same as CODER_EVAL_RAW_SDK_LOG=1).",
    ),
]
IndexOpt = Annotated[
    bool, typer.Option(help="Index the finished run into the run store (coder-eval history lists it).")
]
StoreOpt = Annotated[
    Path | None,
    typer.Option(help="The run store (default $CODER_EVAL_STORE, else history.duckdb beside the run)."),
]
BaselineOpt = Annotated[
    str | None,
    typer.Option(
        metavar="RUN",
        help="Compare with a baseline run: its folder, its run id in the store, or latest-on-BRANCH.",
    ),
]
FailOnOpt = Annotated[
    str,
    typer.Option(
        help="With --baseline or --until-conclusive: worse (exit 1 when the run is called worse) or never."
    ),
]
MaxDropOpt = Annotated[
    float | None,
    typer.Option(
        metavar="SHARE",
        help="With --baseline --fail-on worse: also fail when the pass rate's point estimate drops by "
        "more than this (0.1: ten points), called or not.",
    ),
]
