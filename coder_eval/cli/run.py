"""``coder-eval run``: resolve the experiment, run the episodes, then gates, JUnit and reports."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, NamedTuple, cast

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from coder_eval.agents.spec import plugin_paths
from coder_eval.cli.app import app, console, out, warn
from coder_eval.cli.finish import AfterRun, finish
from coder_eval.cli.inputs import (
    AgentOpt,
    DefineOpt,
    DriverOpt,
    ExcludeTagsOpt,
    ExperimentOpt,
    IncludeSkippedOpt,
    ModelOpt,
    PathsArg,
    RepeatsOpt,
    RunInputs,
    SampleOpt,
    SamplePerStratumOpt,
    SampleTasksOpt,
    SplitOpt,
    TagsOpt,
)
from coder_eval.cli.summary import after_run, outcome_code, print_not_passed, print_totals, resume_hint
from coder_eval.errors import ExitCode, InputError, did_you_mean
from coder_eval.executors import EXECUTORS, ExecutorName, check_executor, open_executor
from coder_eval.experiment import Resolution
from coder_eval.experiment.checks import plan_warnings
from coder_eval.resume import ResumeDecision, decide_resume
from coder_eval.run_dir import PlannedEpisode, RunDir, RunManifest, check_episode_names, new_run_id
from coder_eval.run_stop import left_interrupted
from coder_eval.runner import BatchSummary, EpisodePlan, kept_episodes, run_batch, versions
from coder_eval.sandbox.leftovers import reap_dead, reap_logged, recording_sandboxes
from coder_eval.skill_record import arm_lines
from coder_eval.snapshots import DEFAULT_MAX_MB, MB
from coder_eval.trajectory import EpisodeEnd

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
SANDBOX_LOG_FILE = "sandboxes.jsonl"
"""In the run directory: every sandbox the run made (to reap them after a crash)."""

ExecutorOpt = Annotated[
    str, typer.Option(help="Where episodes run: local (this process) or dask (docs/executors.md).")
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(help="With --executor dask: a running cluster (tcp://HOST:PORT), not a LocalCluster."),
]


class Placement(NamedTuple):
    """Where the episodes run: the executor, and the scheduler of a running dask cluster."""

    executor: ExecutorName
    scheduler: str | None


@app.command()
def run(
    paths: PathsArg = None,
    experiment: ExperimentOpt = None,
    define: DefineOpt = None,
    model: ModelOpt = None,
    agent: AgentOpt = None,
    repeats: RepeatsOpt = None,
    jobs: Annotated[
        int,
        typer.Option("-j", "--jobs", min=1, help="Episodes run at once (dask: LocalCluster workers)."),
    ] = 1,
    run_dir: Annotated[
        Path | None, typer.Option(help="This run's directory (default runs/<run_id>).")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Finish an interrupted run (default runs/latest).")] = False,
    replan: Annotated[
        bool, typer.Option(help="With --resume: run again the finished episodes whose task has changed.")
    ] = False,
    retry_invalid: Annotated[
        bool, typer.Option(help="With --resume: run again every invalid episode (provider, agent, grader).")
    ] = False,
    tags: TagsOpt = None,
    sample: SampleOpt = None,
    sample_per_stratum: SamplePerStratumOpt = None,
    sample_tasks: SampleTasksOpt = None,
    split: SplitOpt = None,
    exclude_tags: ExcludeTagsOpt = None,
    include_skipped: IncludeSkippedOpt = False,
    driver: DriverOpt = None,
    max_cost_usd: Annotated[
        float | None, typer.Option(min=0, help="Stop launching episodes once this many dollars are spent.")
    ] = None,
    min_pass_rate: Annotated[
        float | None, typer.Option(min=0, max=1, help="Gate: each variant's pass rate at least X.")
    ] = None,
    junit_xml: Annotated[
        Path | None, typer.Option(help="Write JUnit XML here (one case per episode).")
    ] = None,
    report: Annotated[bool, typer.Option(help="Render the reports after the run.")] = True,
    executor: ExecutorOpt = "local",
    scheduler: SchedulerOpt = None,
    snapshots: SnapshotsOpt = True,
    snapshot_max_mb: SnapshotMaxOpt = DEFAULT_MAX_MB,
    require_all_pass: RequireAllPassOpt = False,
) -> None:
    """Run tasks and write one trajectory per episode under runs/<run_id>/."""
    placement = _placement(executor, scheduler)
    inputs = RunInputs.of(
        paths,
        experiment,
        define,
        model,
        agent,
        repeats,
        tags,
        sample,
        split,
        exclude_tags,
        include_skipped,
        driver,
        sample_per_stratum=sample_per_stratum,
        sample_tasks=sample_tasks,
    )
    after = AfterRun(min_pass_rate, junit_xml, report)
    if (replan or retry_invalid) and not resume:
        raise typer.BadParameter("it is for --resume", param_hint="'--replan' / '--retry-invalid'")
    if resume:
        opened, manifest = _reopen(run_dir or Path("runs/latest"))
    else:
        resolution = inputs.resolve()
        root = run_dir.parent if run_dir else Path("runs")
        check_episode_names([(p.episode_id, p.task.task_id) for p in resolution.plans], root)
        opened, manifest = _create(run_dir, resolution, inputs)
    try:
        rerun: frozenset[str] = frozenset()
        if resume:
            stored = RunInputs.model_validate(manifest.extra.get("inputs", {}))
            resolution = inputs.over(stored).resolve()
            decision = decide_resume(
                opened, manifest, resolution.plans, replan=replan, retry_invalid=retry_invalid
            )
            _print_decision(decision)
            manifest.resumes.append(decision.record)
            rerun = decision.rerun
        warn(plan_warnings(resolution))
        _reap_leftovers(opened, resume)
        cap_mb = snapshot_max_mb if snapshots else None
        batch = _Batch(jobs, resume, max_cost_usd, cap_mb, placement, rerun)
        summary = _execute(opened, manifest, resolution.plans, batch)
        totals = print_totals(opened, summary.skipped_done if resume else None)
        _print_skills(opened, resolution)
        print_not_passed(opened, totals)
        code = finish(opened, manifest, resolution, after_run(after, totals))
    finally:
        opened.release()
    if summary.budget_stopped:
        console.print(f"budget of ${max_cost_usd} reached: {summary.not_started} episodes not started")
        code = ExitCode.BUDGET_STOPPED
    code = outcome_code(totals, code, require_all_pass)
    if code:
        raise typer.Exit(code)


def _print_decision(decision: ResumeDecision) -> None:
    """What the resume runs again beyond the unfinished episodes, and why."""
    record = decision.record
    lines = [
        (record.replanned, "ran a task that has changed since: run again with the tasks as they are now"),
        (record.harness_invalid, "were left invalid by the harness (a lost worker, a sandbox): run again"),
        (record.retried_invalid, "were invalid (provider, agent or grader): run again (--retry-invalid)"),
    ]
    for episodes, why in lines:
        if episodes:
            listed = ", ".join(episodes[:5]) + (" ..." if len(episodes) > 5 else "")
            console.print(f"resume: {len(episodes)} finished episode(s) {why}: {listed}", highlight=False)


def _placement(executor: str, scheduler: str | None) -> Placement:
    """The executor options, checked before anything is resolved or run (bad ones exit 2)."""
    if executor not in EXECUTORS:
        choices = f"choose {' or '.join(EXECUTORS)}{did_you_mean(executor, EXECUTORS)}"
        raise typer.BadParameter(f"{executor!r}: {choices}", param_hint="'--executor'")
    name = cast(ExecutorName, executor)
    if scheduler is not None and name != "dask":
        raise typer.BadParameter("a scheduler is for --executor dask", param_hint="'--scheduler'")
    check_executor(name, scheduler)
    return Placement(name, scheduler)


def _reap_leftovers(run: RunDir, resume: bool) -> None:
    """Sandboxes and processes of harnesses that died (a crash, ``kill -9``): this run's own on
    ``--resume``, and any left in the temp folder; what cannot be removed is named."""
    reaped, problems = reap_dead(Path(tempfile.gettempdir()))
    if resume:
        more, other = reap_logged(run.path / SANDBOX_LOG_FILE)
        reaped, problems = reaped + more, problems + other
    if reaped:
        console.print(f"removed {reaped} sandbox(es) left by a harness that is no longer running")
    warn([f"a leftover sandbox could not be removed: {problem}" for problem in problems])


def _print_skills(run: RunDir, resolution: Resolution) -> None:
    """One line per arm: the skills its episodes were offered, loaded and invoked (runs with skills)."""
    if not any(plugin_paths(p.task.agent) for p in resolution.plans):
        return
    done = run.finished_episodes()
    ends = {
        v: [done[p.episode_id] for p in resolution.plans if p.variant_id == v and p.episode_id in done]
        for v in resolution.experiment.variant_ids
    }
    for line in arm_lines(ends):
        out.print(line, highlight=False, markup=False)


def _create(run_dir: Path | None, resolution: Resolution, inputs: RunInputs) -> tuple[RunDir, RunManifest]:
    if run_dir is not None and run_dir.exists():
        raise InputError(f"{run_dir} already exists; use --resume to finish it or choose another --run-dir")
    experiment, plans = resolution.experiment, resolution.plans
    manifest = RunManifest(
        run_id=run_dir.name if run_dir else new_run_id(),
        experiment_id=experiment.experiment_id,
        description=experiment.description,
        command=sys.argv,
        variants=experiment.variant_ids,
        tasks=resolution.task_ids,
        repeats=max(resolution.repeats.values()),
        episodes=[
            PlannedEpisode(
                episode_id=p.episode_id, task_id=p.task.task_id, variant_id=p.variant_id, repeat=p.repeat
            )
            for p in plans
        ],
        versions=versions(),
        extra={"inputs": inputs.stored(resolution), "experiment": _experiment_record(resolution)},
    )
    root = run_dir.parent if run_dir else Path("runs")
    return RunDir.create(root, manifest), manifest


def _experiment_record(resolution: Resolution) -> dict[str, object]:
    """The experiment file and, per variant, what it resolved to (agents and models over its tasks)."""
    variants = []
    for variant in resolution.experiment.variants:
        tasks = [p.task for p in resolution.plans if p.variant_id == variant.variant_id]
        variants.append(
            {
                "variant_id": variant.variant_id,
                "description": variant.description,
                "repeats": resolution.repeats[variant.variant_id],
                "agents": sorted({t.agent.kind for t in tasks}),
                "models": sorted({t.agent.model or "default" for t in tasks}),
            }
        )
    path = resolution.experiment.path
    compare = resolution.experiment.compare.model_dump()  # the headline's tasks, for the compare report
    return {"path": str(path) if path else None, "variants": variants, "compare": compare}


def _reopen(path: Path) -> tuple[RunDir, RunManifest]:
    """The run to resume, locked (``RunLocked`` while another process writes it)."""
    run = RunDir.open(path, lock=True)
    try:
        manifest = run.read_manifest()
        if manifest.regraded_from is not None:
            raise InputError(
                f"{path} was made by coder-eval regrade from {manifest.regraded_from.run_dir}; its agents "
                "never run again: regrade that run again into a new --run-dir"
            )
    except BaseException:
        run.release()
        raise
    if run.lock is not None and run.lock.previous is not None:
        console.print(
            f"resume: took over the run's lock from {run.lock.previous.describe()}, which is no longer "
            "running",
            highlight=False,
        )
    return run, manifest


@dataclass(frozen=True)
class _Batch:
    """How ``run`` executes its episodes (``snapshot_max_mb`` None: no snapshots kept; ``rerun``:
    finished episodes a resume runs again)."""

    jobs: int
    resume: bool
    max_cost: float | None
    snapshot_max_mb: float | None
    placement: Placement
    rerun: frozenset[str] = frozenset()


def _execute(run: RunDir, manifest: RunManifest, plans: list[EpisodePlan], batch_of: _Batch) -> BatchSummary:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    resume, max_cost, cap_mb = batch_of.resume, batch_of.max_cost, batch_of.snapshot_max_mb
    with Progress(*columns, console=console, transient=False) as progress:
        done = len(kept_episodes(run, batch_of.rerun).keys() & {p.episode_id for p in plans}) if resume else 0
        warn(
            [
                f"{episode}: the trajectory was written to after it ended (tampered); "
                "it is set aside in partial/ and run again"
                for episode in run.tampered
            ]
        )
        bar = progress.add_task("running", total=len(plans), completed=done)
        counts = {"pass": 0, "fail": 0, "invalid": 0}

        def on_done(plan: EpisodePlan, end: EpisodeEnd) -> None:
            counts[end.outcome] += 1
            text = f"pass {counts['pass']} fail {counts['fail']} invalid {counts['invalid']}"
            progress.update(bar, advance=1, description=text)

        manifest.status = "running"
        run.write_manifest(manifest)
        batch = _on_executor(run, manifest.run_id, plans, batch_of, on_done)
        try:
            with (
                left_interrupted(run, manifest),
                _sigterm_as_interrupt(),
                recording_sandboxes(run.path / SANDBOX_LOG_FILE),
            ):
                summary = asyncio.run(batch)
        except KeyboardInterrupt:
            console.print(resume_hint(run), highlight=False, soft_wrap=True)
            raise
        progress.update(bar, completed=len(plans))
    manifest.snapshots = run.snapshot_totals(cap_mb)
    _record_status(run, manifest, summary, max_cost)
    return summary


async def _on_executor(
    run: RunDir,
    run_id: str,
    plans: list[EpisodePlan],
    batch_of: _Batch,
    on_done: Callable[[EpisodePlan, EpisodeEnd], None],
) -> BatchSummary:
    """Start the executor (a dask LocalCluster has ``jobs`` workers), run the batch on it, stop it."""
    placement, cap_mb = batch_of.placement, batch_of.snapshot_max_mb
    async with open_executor(
        placement.executor, slots=batch_of.jobs, scheduler=placement.scheduler
    ) as executor:
        if executor.dashboard:
            console.print(f"dask dashboard: {executor.dashboard}", highlight=False)
        return await run_batch(
            plans,
            run,
            run_id=run_id,
            concurrency=batch_of.jobs,
            resume=batch_of.resume,
            max_cost_usd=batch_of.max_cost,
            on_done=on_done,
            executor=executor,
            snapshot_max_bytes=int(cap_mb * MB) if cap_mb is not None else None,
            rerun=batch_of.rerun,
        )


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (how CI systems cancel a job) stops the run the way Ctrl-C does: running episodes are
    cancelled and their processes killed, the manifest says ``interrupted``, and ``--resume`` goes on."""
    previous = signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _record_status(run: RunDir, manifest: RunManifest, summary: BatchSummary, max_cost: float | None) -> None:
    manifest.status = "budget_stopped" if summary.budget_stopped else "completed"
    if max_cost is not None:
        manifest.extra["budget"] = {
            "max_cost_usd": max_cost,
            "spent_usd": round(summary.cost_usd, 6),
            "stopped": summary.budget_stopped,
            "not_started": summary.not_started,
        }
    run.write_manifest(manifest)
