"""``coder-eval run --until-conclusive``: the rule from the options and the experiment's block, the
live interval on the progress bar, and the stopping reason printed. The scheduler is the library's
(``coder_eval.run.adaptive``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer
from pydantic import ValidationError

from coder_eval.cli.app import console, out
from coder_eval.cli.run_console import BarProgress, progress_bar
from coder_eval.cli.summary import resume_hint
from coder_eval.manifest import AdaptiveRecord, UntilConclusiveRule

if TYPE_CHECKING:
    from coder_eval.experiment import Resolution
    from coder_eval.run import Batch, RunSession


OPTIONS = {"delta": "delta", "metrics": "decide-on", "max_tasks": "max-tasks", "max_episodes": "max-episodes"}
"""A rule's field -> the option of ``coder-eval run`` that sets it."""


def rule_text(rule: UntilConclusiveRule) -> str:
    """``delta 0.2, decide-on passed, max-tasks none, max-episodes none``"""
    shown = {f: getattr(rule, f) for f in OPTIONS}
    return ", ".join(
        f"{OPTIONS[f]} {', '.join(v) if isinstance(v, list) else 'none' if v is None else v}"
        for f, v in shown.items()
    )


@dataclass(frozen=True)
class Asked:
    """What the command line asked: ``flag`` None follows the experiment's block; the rest
    override the block's fields."""

    flag: bool | None
    overrides: dict[str, Any]
    gate_alone: bool = False
    """``--fail-on worse`` without ``--baseline``: the run must stop at its answer to have a gate."""

    @classmethod
    def of(
        cls,
        flag: bool | None,
        delta: float | None,
        metrics: list[str] | None,
        max_tasks: int | None,
        max_episodes: int | None,
    ) -> Asked:
        """From the options, checked (a bad one exits 2 naming it) before anything is resolved."""
        given = {
            "delta": delta,
            "metrics": metrics or None,
            "max_tasks": max_tasks,
            "max_episodes": max_episodes,
        }
        overrides = {k: v for k, v in given.items() if v is not None}
        if overrides and flag is False:
            raise typer.BadParameter("they are for --until-conclusive", param_hint="'--fixed-design'")
        try:
            UntilConclusiveRule.model_validate(overrides)
        except ValidationError as exc:
            first = exc.errors()[0]
            option = OPTIONS.get(str(first["loc"][0]), str(first["loc"][0]))
            raise typer.BadParameter(
                first["msg"].removeprefix("Value error, "), param_hint=f"'--{option}'"
            ) from exc
        return cls(flag, overrides)

    def check_resumed(self, record: AdaptiveRecord | None) -> None:
        """``--resume`` keeps the design and the rule the run recorded before its first result: a
        different one asked for is refused (exit 2) naming the recorded value; the same one given
        again is accepted."""
        if record is None:
            if self.flag or self.overrides:
                raise typer.BadParameter(
                    "this run was started with a fixed design (no until_conclusive rule in its run.json); "
                    "a resume keeps it: start a new run to stop at the answer",
                    param_hint="'--until-conclusive'",
                )
            return
        if self.flag is False:
            raise typer.BadParameter(
                f"this run was started --until-conclusive ({rule_text(record.rule)}); a resume keeps it",
                param_hint="'--fixed-design'",
            )
        for field, value in self.overrides.items():
            recorded = getattr(record.rule, field)
            if value != recorded:
                shown = ", ".join(recorded) if isinstance(recorded, list) else recorded
                raise typer.BadParameter(
                    f"this run recorded {field} {shown if shown is not None else 'none (no cap)'} "
                    "in its run.json before its first result; a resume keeps its rule: resume without "
                    "the option, or start a new run",
                    param_hint=f"'--{OPTIONS.get(field, field)}'",
                )

    def rule(self, resolution: Resolution) -> UntilConclusiveRule | None:
        """The rule of a new run (None: the fixed design)."""
        block = resolution.experiment.until_conclusive
        if self.flag is False or (self.flag is None and block is None and not self.overrides):
            return None
        merged = (block or UntilConclusiveRule()).model_dump(exclude_unset=True) | self.overrides
        return UntilConclusiveRule.model_validate(merged)

    def check(self, resolution: Resolution) -> None:
        """Refuse, before the run directory is made, a rule the plan cannot follow."""
        from coder_eval.errors import InputError

        rule = self.rule(resolution)
        if rule is not None:
            from coder_eval.run.adaptive import arms  # the sequence's statistics, for this rule only

            arms(rule, resolution.experiment.variant_ids)
        elif self.gate_alone and resolution.experiment.baseline is None:
            raise InputError(
                "--fail-on worse: it needs --baseline (the run to compare with) or --until-conclusive"
            )

    def rule_of(self, session: RunSession) -> UntilConclusiveRule | None:
        """A resumed run keeps the rule it recorded; a new one takes ``rule``."""
        if session.manifest.adaptive is not None:
            return session.manifest.adaptive.rule
        return None if session.resuming else self.rule(session.resolution)


class SequenceBar(BarProgress):
    """The progress bar with the live interval and decision after each completed task."""

    def looked(self, record: AdaptiveRecord) -> None:
        from coder_eval.run.adaptive_words import interval_text

        path = record.paths[0]
        said = f", {record.decision}" if record.decision else ""
        shown = interval_text(path, record)
        self.suffix = f" | {record.decided_tasks}/{record.max_tasks} tasks, {path.metric} {shown}{said}"
        self.show()


def print_sequence(record: AdaptiveRecord) -> None:
    """The stopping reason in words, the tasks that ran and did not count, and what the fixed-design
    headline below it is not."""
    out.print(f"until conclusive: {record.reason}", highlight=False, markup=False, soft_wrap=True)
    console.print(
        "until conclusive: the headline's interval and p are fixed-design figures, not valid after "
        "stopping at the answer; the interval above is (docs/statistics.md)",
        highlight=False,
    )
    if record.in_flight:
        console.print(
            f"until conclusive: {len(record.in_flight)} task(s) were running at the stop; their episodes are "
            "kept and do not change the decision",
            highlight=False,
        )


def execute_shown(session: RunSession, batch: Batch, asked: Asked) -> None:
    """The episodes (until the answer, when a rule says so), under a progress bar; after Ctrl-C,
    how to resume."""
    from coder_eval.run.batch import kept_episodes

    rule = asked.rule_of(session)
    kept = kept_episodes(session.run, session.decision.rerun) if session.decision is not None else {}
    stopped = session.manifest.adaptive.stop if session.manifest.adaptive is not None else None
    if stopped is not None:
        console.print(
            f"until conclusive: this run had stopped ({stopped}); a stop is final, so nothing more runs",
            highlight=False,
        )
    with progress_bar() as bar:
        plans = session.resolution.plans
        shown = SequenceBar(bar, plans, kept) if rule is not None else BarProgress(bar, plans, kept)
        try:
            if rule is None:
                session.execute(batch, shown)
            else:
                from coder_eval.run.adaptive import execute_until_conclusive, start

                if session.manifest.adaptive is None:
                    start(session, rule)
                record = execute_until_conclusive(session, batch, shown)
        except KeyboardInterrupt:
            console.print(resume_hint(session.run), highlight=False, soft_wrap=True)
            raise
        shown.complete(budget_stopped=session.batch is not None and session.batch.budget_stopped)
    if rule is not None:
        print_sequence(record)
