"""The options that select a run's episodes, shared by ``run`` and ``plan`` (``RunInputs`` holds them).

``--resume`` rebuilds the same plan from the manifest's ``inputs`` record (paths and the experiment
are stored absolute).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
