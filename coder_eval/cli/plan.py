"""``coder-eval plan`` (what would run, and what would measure the wrong thing) and ``validate``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table

from coder_eval.cli import plan_forecast as forecast
from coder_eval.cli import run_options as own
from coder_eval.cli.app import app, out, warn, whole
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
    SampleOpt,
    SamplePerStratumOpt,
    SampleTasksOpt,
    SplitOpt,
    TagsOpt,
)
from coder_eval.errors import ExitCode
from coder_eval.experiment import Resolution
from coder_eval.experiment.checks import check_environments, plan_warnings
from coder_eval.experiment.inputs import RunInputs
from coder_eval.experiment.settings import runs_root
from coder_eval.experiment.skill_arms import skill_names
from coder_eval.run_dir import check_episode_names
from coder_eval.task import load_tasks


@app.command()
def plan(
    paths: PathsArg = None,
    experiment: ExperimentOpt = None,
    define: DefineOpt = None,
    model: ModelOpt = None,
    agent: AgentOpt = None,
    repeats: RepeatsOpt = None,
    tags: TagsOpt = None,
    sample: SampleOpt = None,
    sample_per_stratum: SamplePerStratumOpt = None,
    sample_tasks: SampleTasksOpt = None,
    split: SplitOpt = None,
    exclude_tags: ExcludeTagsOpt = None,
    include_skipped: IncludeSkippedOpt = False,
    driver: DriverOpt = None,
    history: forecast.HistoryOpt = None,
    until_conclusive: own.UntilConclusiveOpt = None,
    effect: forecast.EffectOpt = None,
    delta: own.DeltaOpt = None,
    max_tasks: own.MaxTasksOpt = None,
    max_cost_usd: own.MaxCostOpt = None,
) -> None:
    """Validate tasks and experiment, list the episodes and forecast their cost, without running them."""
    from coder_eval.cli.run_adaptive import Asked

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
    asked = Asked.of(until_conclusive, delta, None, max_tasks, None)
    resolution = inputs.resolve()
    check_episode_names([(p.episode_id, p.task.task_id) for p in resolution.plans], runs_root())
    asked.check(resolution)
    check_environments(p.task for p in resolution.plans)
    out.print(variant_table(resolution))
    out.print(task_table(resolution))
    out.print(episode_table(resolution))
    history = history or runs_root()
    table, per_episode = forecast.forecast_table(resolution, history)
    out.print(table if table is not None else f"forecast: no earlier run of these tasks in {history}")
    rule = asked.rule(resolution)
    if rule is not None:
        for line in forecast.decision_lines(resolution, rule, effect, per_episode, max_cost_usd):
            out.print(line, highlight=False)
    warn(plan_warnings(resolution))


def variant_table(resolution: Resolution) -> Table:
    """Variants × tasks × repeats, with the agent and model each variant resolves to."""
    experiment = resolution.experiment
    n_tasks = len(resolution.task_ids)
    title = f"experiment {experiment.experiment_id}: {len(experiment.variants)} variants × {n_tasks} tasks"
    skills = _offered(resolution)
    columns = ["variant", "agent", "model", "tasks", "repeats", "episodes", *(["skills"] if skills else [])]
    table = Table(
        whole("variant", experiment.variant_ids),
        *columns[1:],
        Column("description", overflow="fold"),
        title=title,
    )
    for variant in experiment.variants:
        plans = [p for p in resolution.plans if p.variant_id == variant.variant_id]
        table.add_row(
            variant.variant_id,
            ", ".join(sorted({p.task.agent.kind for p in plans})),
            ", ".join(sorted({p.task.agent.model or "default" for p in plans})),
            str(n_tasks),
            str(resolution.repeats[variant.variant_id]),
            str(len(plans)),
            *([", ".join(skills.get(variant.variant_id, [])) or "none"] if skills else []),
            variant.description,
        )
    return table


def _offered(resolution: Resolution) -> dict[str, list[str]]:
    """The skills each variant's plugins offer (empty when no variant offers any)."""
    offered: dict[str, set[str]] = {}
    for plan in resolution.plans:
        offered.setdefault(plan.variant_id, set()).update(skill_names(plan.task))
    return {v: sorted(names) for v, names in offered.items()} if any(offered.values()) else {}


def task_table(resolution: Resolution) -> Table:
    """Per task, the agent and model each variant resolves to (a task may set its own)."""
    variants = resolution.experiment.variant_ids
    ids = [p.task.task_id for p in resolution.plans]
    table = Table(whole("task", ids), *variants, title="agent · model per task and variant")
    resolved: dict[str, dict[str, str]] = {}
    for p in resolution.plans:
        agent = p.task.agent
        resolved.setdefault(p.task.task_id, {})[p.variant_id] = f"{agent.kind} · {agent.model or 'default'}"
    for task_id, cells in resolved.items():
        table.add_row(task_id, *(cells.get(v, "-") for v in variants))
    return table


def episode_table(resolution: Resolution) -> Table:
    plans = resolution.plans
    episodes = whole("episode", [p.episode_id for p in plans])
    table = Table(episodes, "task", "variant", "repeat", "agent", "model", title=f"{len(plans)} episodes")
    for p in plans:
        agent = p.task.agent
        table.add_row(
            p.episode_id, p.task.task_id, p.variant_id, str(p.repeat), agent.kind, agent.model or "-"
        )
    return table


@app.command()
def validate(paths: Annotated[list[Path], typer.Argument(help="Task files or folders of them.")]) -> None:
    """Grader self-test: every task must pass with the oracle agent and fail with the none agent."""
    from coder_eval.run.validate import validate_tasks

    tasks = [t for t in load_tasks(paths) if not t.skip]
    check_environments(tasks)
    report = asyncio.run(validate_tasks(tasks))
    table = Table(
        whole("task", [r.task_id for r in report]), "oracle", "none", "verdict", title="grader self-test"
    )
    for row in report:
        style = "green" if row.ok else "red"
        table.add_row(row.task_id, row.oracle, row.none, f"[{style}]{row.verdict}[/{style}]")
    out.print(table)
    if not all(row.ok for row in report):
        raise typer.Exit(ExitCode.GATE_FAILED)
