"""What selects a run's episodes: the options ``run`` and ``plan`` share, stored in the manifest.

``--resume`` rebuilds the same plan from ``manifest.extra["inputs"]`` (paths and the experiment
are stored absolute).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ConfigDict, field_validator

from coder_eval.errors import InputError
from coder_eval.experiment import (
    CommandLine,
    Resolution,
    Selection,
    experiment_path,
    load_experiment,
    resolve,
)

PathsArg = Annotated[list[Path] | None, typer.Argument(help="Task files or folders of them.")]
ExperimentOpt = Annotated[
    Path | None,
    typer.Option(
        "--experiment",
        "-e",
        help="Experiment file, or a NAME for experiments/NAME.yaml (default experiments/default.yaml).",
    ),
]
DefineOpt = Annotated[
    list[str] | None,
    typer.Option("-D", "--define", "--set", help="Override a task field: -D path=value."),
]
ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="Shortcut for -D agent.model=M (not with -D on it).")
]
AgentOpt = Annotated[
    str | None,
    typer.Option(
        "--agent",
        "--type",
        "-T",
        help="Shortcut for -D agent.type=KIND (oracle, none, ...; not with -D on it).",
    ),
]
RepeatsOpt = Annotated[int | None, typer.Option(min=1, help="Repeats per task, every variant.")]
TagsOpt = Annotated[list[str] | None, typer.Option(help="Only tasks with any of these tags.")]
ExcludeTagsOpt = Annotated[list[str] | None, typer.Option(help="Leave out tasks with any of these tags.")]
IncludeSkippedOpt = Annotated[bool, typer.Option(help="Also run tasks marked skip (quarantined).")]
DriverOpt = Annotated[str | None, typer.Option(help="Shortcut for -D sandbox.driver=DRIVER.")]
SampleOpt = Annotated[
    int | None,
    typer.Option(
        min=1, help="Dataset tasks: N rows each, drawn uniformly, seed 0 (over --sample-per-stratum)."
    ),
]
SamplePerStratumOpt = Annotated[
    int | None,
    typer.Option(min=1, help="Dataset tasks: up to N rows per stratum (seed dataset.sample_seed)."),
]
SampleTasksOpt = Annotated[int | None, typer.Option(min=1, help="A fixed-seed (0) random sample of N tasks.")]
SplitOpt = Annotated[str | None, typer.Option(help="Only dataset rows of this split.")]


class RunInputs(BaseModel):
    """The selection options of one invocation."""

    model_config = ConfigDict(extra="ignore")
    paths: list[str] = []
    experiment: str | None = None
    defines: list[str] = []
    model: str | None = None
    agent: str | None = None
    repeats: int | None = None
    tags: list[str] = []
    sample: int | None = None
    sample_per_stratum: int | None = None
    sample_tasks: int | None = None
    split: str | None = None
    exclude_tags: list[str] = []
    include_skipped: bool = False
    driver: str | None = None

    @field_validator("paths", "defines", "tags", "exclude_tags", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @classmethod
    def of(
        cls,
        paths: list[Path] | None,
        experiment: Path | None,
        defines: list[str] | None,
        model: str | None,
        agent: str | None,
        repeats: int | None,
        tags: list[str] | None,
        sample: int | None,
        split: str | None,
        exclude_tags: list[str] | None = None,
        include_skipped: bool = False,
        driver: str | None = None,
        *,
        sample_per_stratum: int | None = None,
        sample_tasks: int | None = None,
    ) -> RunInputs:
        """From the command-line options, as typer gives them."""
        return cls(
            sample_per_stratum=sample_per_stratum,
            sample_tasks=sample_tasks,
            exclude_tags=exclude_tags or [],
            include_skipped=include_skipped,
            driver=driver,
            paths=[str(p) for p in paths or []],
            experiment=str(experiment) if experiment else None,
            defines=defines or [],
            model=model,
            agent=agent,
            repeats=repeats,
            tags=tags or [],
            sample=sample,
            split=split,
        )

    def over(self, stored: RunInputs) -> RunInputs:
        """The stored inputs (``--resume``); an option given again must agree with them, since a run
        whose episodes ran under two configurations would no longer pair its variants honestly."""
        given = {k: v for k, v in self.model_dump().items() if v not in (None, [], False)}
        if "paths" in given:
            given["paths"] = [str(Path(p).resolve()) for p in given["paths"]]
        if "experiment" in given:
            given["experiment"] = str(experiment_path(Path(given["experiment"])).resolve())
        before = stored.model_dump()
        changed = sorted(name for name, value in given.items() if before.get(name) != value)
        if changed:
            was = ", ".join(f"{name}={before.get(name)!r}" for name in changed)
            raise InputError(
                f"--resume finishes the run with the inputs it started with ({was}); drop "
                f"{', '.join('--' + name.rstrip('s') for name in changed)} or start a new run"
            )
        return stored

    def resolve(self) -> Resolution:
        """Load the experiment and resolve the episodes."""
        experiment = load_experiment(experiment_path(Path(self.experiment)) if self.experiment else None)
        return resolve(
            experiment,
            [Path(p) for p in self.paths],
            CommandLine(tuple(self.defines), self.model, self.agent, self.repeats, self.driver),
            Selection(
                tags=tuple(self.tags),
                split=self.split,
                sample=self.sample,
                sample_per_stratum=self.sample_per_stratum,
                sample_tasks=self.sample_tasks,
                exclude_tags=tuple(self.exclude_tags),
                include_skipped=self.include_skipped,
            ),
        )

    def stored(self, resolution: Resolution) -> dict[str, Any]:
        """The JSON form kept in the manifest: paths and the experiment made absolute."""
        path = resolution.experiment.path
        absolute = [str(Path(p).resolve()) for p in self.paths]
        return self.model_copy(
            update={"paths": absolute, "experiment": str(path) if path else None}
        ).model_dump()
