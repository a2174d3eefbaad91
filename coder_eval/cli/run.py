"""``coder-eval run``: the options handed to a ``RunSession`` (``coder_eval.run``), and what it
returns printed. The run itself (resume, leftovers, the batch, gates, JUnit, reports, the exit code)
is the session's.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from coder_eval.cli import inputs as shared
from coder_eval.cli import run_options as own
from coder_eval.cli.app import app, console, warn
from coder_eval.cli.report import announce_reports
from coder_eval.cli.run_adaptive import Asked, execute_shown
from coder_eval.cli.run_console import print_decision, print_reaped, print_took_over
from coder_eval.cli.summary import print_finished, print_outcome, print_run_totals
from coder_eval.episode.snapshots import DEFAULT_MAX_MB

if TYPE_CHECKING:
    from collections.abc import Callable

    from coder_eval.experiment import Resolution
    from coder_eval.experiment.inputs import RunInputs
    from coder_eval.run import AfterRun, Placement, RunSession


@app.command()
def run(
    paths: shared.PathsArg = None,
    experiment: shared.ExperimentOpt = None,
    define: shared.DefineOpt = None,
    model: shared.ModelOpt = None,
    agent: shared.AgentOpt = None,
    repeats: shared.RepeatsOpt = None,
    jobs: own.JobsOpt = 1,
    run_dir: own.RunDirOpt = None,
    resume: own.ResumeOpt = False,
    replan: own.ReplanOpt = False,
    retry_invalid: own.RetryInvalidOpt = False,
    tags: shared.TagsOpt = None,
    sample: shared.SampleOpt = None,
    sample_per_stratum: shared.SamplePerStratumOpt = None,
    sample_tasks: shared.SampleTasksOpt = None,
    split: shared.SplitOpt = None,
    exclude_tags: shared.ExcludeTagsOpt = None,
    include_skipped: shared.IncludeSkippedOpt = False,
    driver: shared.DriverOpt = None,
    max_cost_usd: own.MaxCostOpt = None,
    min_pass_rate: own.MinPassRateOpt = None,
    junit_xml: own.JunitXmlOpt = None,
    report: own.ReportOpt = True,
    executor: own.ExecutorOpt = "local",
    scheduler: own.SchedulerOpt = None,
    snapshots: own.SnapshotsOpt = True,
    snapshot_max_mb: own.SnapshotMaxOpt = DEFAULT_MAX_MB,
    require_all_pass: own.RequireAllPassOpt = False,
    until_conclusive: own.UntilConclusiveOpt = None,
    delta: own.DeltaOpt = None,
    decide_on: own.DecideOnOpt = None,
    max_tasks: own.MaxTasksOpt = None,
    max_episodes: own.MaxEpisodesOpt = None,
    baseline: own.BaselineOpt = None,
    fail_on: own.FailOnOpt = "never",
    max_drop: own.MaxDropOpt = None,
    index: own.IndexOpt = True,
    store: own.StoreOpt = None,
    raw_events: own.RawEventsOpt = False,
) -> None:
    """Run tasks and write one trajectory per episode under runs/<run_id>/."""
    from coder_eval.agents.raw_events import SWITCH
    from coder_eval.experiment.inputs import RunInputs
    from coder_eval.experiment.settings import runs_root
    from coder_eval.run import AfterRun, Batch
    from coder_eval.run.frozen import check_frozen
    from coder_eval.run.regression import check_experiment_gate, check_max_drop, regression_gate
    from coder_eval.store.connection import store_for

    placement = _placement(executor, scheduler)
    if raw_events:  # the switch the episodes read, here and in the dask workers this process starts
        os.environ[SWITCH] = "1"
    inputs = RunInputs.of(
        paths, experiment, define, model, agent, repeats, tags, sample, split, exclude_tags,
        include_skipped, driver, sample_per_stratum=sample_per_stratum, sample_tasks=sample_tasks,
    )  # fmt: skip
    gate = regression_gate(
        baseline, fail_on, store_for(run_dir or runs_root() / "run", store), until_conclusive
    )
    after = AfterRun(
        min_pass_rate, junit_xml, report, require_all_pass, index, store, *gate,
        max_drop=check_max_drop(max_drop, baseline),
    )  # fmt: skip
    if (replan or retry_invalid) and not resume:
        raise typer.BadParameter("it is for --resume", param_hint="'--replan' / '--retry-invalid'")
    asked = Asked.of(until_conclusive, delta, decide_on, max_tasks, max_episodes)
    asked = replace(asked, gate_alone=gate == (None, "worse"))
    gate_store = store_for(run_dir or runs_root() / "run", store)

    def check(resolution: Resolution) -> None:
        asked.check(resolution)
        check_experiment_gate(resolution, after.baseline, gate_store)
        check_frozen(resolution.plans, placement.executor)

    session = _open(inputs, run_dir, resume, replan, retry_invalid, asked, check, here=scheduler is None)
    try:
        warn(session.warnings)
        print_gate_plan(session, after)
        print_reaped(session.reap_leftovers())
        batch = Batch(jobs, max_cost_usd, snapshot_max_mb if snapshots else None, placement)
        execute_shown(session, batch, asked)
        totals = session.totals()
        print_run_totals(session.run, totals)
        result = session.finish(after, totals, on_reports=announce_reports)
        print_finished(after, result.finished)
        warn([n for n in (result.finished.baseline_note, result.finished.index_error) if n])
    finally:
        session.close()
    print_outcome(result)
    if result.exit_code:
        raise typer.Exit(result.exit_code)


def print_gate_plan(session: RunSession, after: AfterRun) -> None:
    """Before the episodes, with ``--baseline --fail-on worse``: the smallest drop the gate sees."""
    from coder_eval.errors import StoreBusy
    from coder_eval.run.regression import gate_plan_line
    from coder_eval.store.connection import store_for

    if after.baseline is None or after.fail_on != "worse":
        return
    resolution = session.resolution
    try:
        line = gate_plan_line(
            after.baseline,
            store_for(session.run.path, after.store),
            resolution.task_ids,
            max(resolution.repeats.values()),
            after.max_drop,
        )
    except StoreBusy as exc:  # the run's end looks again: a busy store is not gated, never a failure
        line = f"--fail-on worse: the smallest drop the gate sees is not computed ({exc})"
    if line is not None:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _open(
    inputs: RunInputs,
    run_dir: Path | None,
    resume: bool,
    replan: bool,
    retry: bool,
    asked: Asked,
    check: Callable[[Resolution], None],
    *,
    here: bool,
) -> RunSession:
    """A new run (``check`` refuses a plan before anything is made), or the run to resume with what
    it runs again decided (and printed); ``here``: its episodes run on this machine (not on a
    cluster's workers), whose environments are checked."""
    from coder_eval.experiment.settings import runs_root
    from coder_eval.run import RunSession

    if not resume:
        return RunSession.create(inputs, run_dir, check=check, here=here)
    session = RunSession.reopen(run_dir or runs_root() / "latest")
    try:
        asked.check_resumed(session.manifest.adaptive)
        print_took_over(session)
        print_decision(session.resume(inputs, replan=replan, retry_invalid=retry))
    except BaseException:
        session.close()
        raise
    return session


def _placement(executor: str, scheduler: str | None) -> Placement:
    """The executor options, checked before anything is resolved or run (bad ones exit 2)."""
    from coder_eval.executors import ExecutorName
    from coder_eval.run import Placement

    return Placement(cast(ExecutorName, executor), scheduler).check()
