"""What selects a run's episodes (``RunInputs``): paths, the experiment, overrides and sampling.

``--resume`` (``RunSession.reopen``) rebuilds the same plan from the manifest's ``inputs`` record
(paths and the experiment are stored absolute).

Example::

    inputs = RunInputs(paths=["tasks/demo"], experiment="experiments/demo_ab.yaml", repeats=2)
    resolution = inputs.resolve()            # InputError (exit 2) naming the file when one is bad
"""

from __future__ import annotations

from pathlib import Path

from coder_eval.errors import InputError
from coder_eval.experiment.resolve import CommandLine, Resolution, resolve
from coder_eval.experiment.settings import settings_layer
from coder_eval.experiment.spec import experiment_path, load_experiment
from coder_eval.experiment.task_selection import Selection
from coder_eval.manifest import InputsRecord


class RunInputs(InputsRecord):
    """The selection options of one invocation (or one Python call): what to run, as ``coder-eval
    run`` and ``plan`` take it. Every field is optional; ``RunInputs(paths=["tasks"])`` is a run."""

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
        """Load the experiment and resolve the episodes (with the ``settings`` layer of the
        environment's ``DEFAULT_*``: ``coder_eval.experiment.settings``)."""
        experiment = load_experiment(experiment_path(Path(self.experiment)) if self.experiment else None)
        return resolve(
            experiment,
            [Path(p) for p in self.paths],
            CommandLine(
                tuple(self.defines), self.model, self.agent, self.repeats, self.driver, settings_layer()
            ),
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

    def stored(self, resolution: Resolution) -> InputsRecord:
        """The record kept in the manifest: paths and the experiment made absolute."""
        path = resolution.experiment.path
        absolute = [str(Path(p).resolve()) for p in self.paths]
        update = {"paths": absolute, "experiment": str(path) if path else None}
        return InputsRecord.model_validate(self.model_copy(update=update).model_dump())
