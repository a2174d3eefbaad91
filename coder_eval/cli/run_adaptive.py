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
            name = {"metrics": "decide-on", "max_tasks": "max-tasks", "max_episodes": "max-episodes"}
            option = name.get(str(first["loc"][0]), str(first["loc"][0]))
            raise typer.BadParameter(
                first["msg"].removeprefix("Value error, "), param_hint=f"'--{option}'"
            ) from exc
        return cls(flag, overrides)

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
    rule = asked.rule_of(session)
    with progress_bar() as bar:
        shown = SequenceBar(bar) if rule is not None else BarProgress(bar)
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
        shown.complete()
    if rule is not None:
        print_sequence(record)
