"""A run as a library object: created (or reopened to resume), executed, finished; data back.

Example::

    with RunSession.create(RunInputs(paths=["tasks/demo"]), Path("runs/demo")) as session:
        session.execute(Batch(jobs=2))
        result = session.finish(AfterRun(min_pass_rate=0.5, report=False))
    result.exit_code

    with RunSession.reopen(Path("runs/demo")) as session:   # RunLocked while another process writes it
        decision = session.resume()                         # ResumeRefused when the tasks changed
        session.execute()

The session holds the run directory's lock from ``create`` or ``reopen`` until ``close`` (or the
end of the ``with`` block). It prints nothing: what ``coder-eval run`` shows, it reads from what the
session returns.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import versions
from coder_eval.errors import InputError
from coder_eval.experiment import Resolution
from coder_eval.experiment.checks import check_environments, plan_warnings
from coder_eval.experiment.inputs import RunInputs
from coder_eval.experiment.settings import runs_root
from coder_eval.manifest import CompareRecord, ExperimentRecord, InputsRecord, VariantRecord
from coder_eval.run.batch import BatchSummary
from coder_eval.run.execute import SANDBOX_LOG_FILE, Batch, Drive, Progress, Quiet, execute
from coder_eval.run.finish import AfterRun, finish_run
from coder_eval.run.frozen import freeze
from coder_eval.run.provenance import source_of, task_content_hashes
from coder_eval.run.result import RunResult, Totals
from coder_eval.run.resume import ResumeDecision, decide_resume
from coder_eval.run.stop import left_interrupted
from coder_eval.run.summary import summarize_run
from coder_eval.run_dir import PlannedEpisode, RunDir, RunManifest, check_episode_names, new_run_id
from coder_eval.run_lock import Holder


@dataclass(frozen=True)
class Reaped:
    """Sandboxes of harnesses that died, removed; and those that could not be, each named."""

    count: int
    problems: list[str]


class RunSession:
    """One run directory, locked, with its manifest and resolved plan."""

    def __init__(self, run: RunDir, manifest: RunManifest, resolution: Resolution | None = None) -> None:
        self.run, self.manifest = run, manifest
        self.resuming = resolution is None
        self._resolution = resolution
        self.decision: ResumeDecision | None = None
        self.batch: BatchSummary | None = None
        self.max_cost: float | None = None
        self._frozen: list[EpisodePlan] | None = None

    @classmethod
    def create(
        cls,
        inputs: RunInputs,
        run_dir: Path | None = None,
        *,
        command: Sequence[str] | None = None,
        check: Callable[[Resolution], None] | None = None,
        here: bool = True,
    ) -> RunSession:
        """Resolve ``inputs`` and make the run directory (default ``runs/<run_id>``, ``$RUNS_DIR``
        for ``runs``: ``coder_eval.experiment.settings``); ``InputError``
        (exit 2) before anything is made when an input is bad (``check`` may refuse the resolved
        plan too), a task's environment cannot run on this machine (``check_environments``; not
        asked when ``here`` is false: the episodes run on a cluster's workers, which are asked) or
        ``run_dir`` exists."""
        resolution = inputs.resolve()
        if check is not None:
            check(resolution)
        if here:
            check_environments(p.task for p in resolution.plans)
        root = run_dir.parent if run_dir else runs_root()
        check_episode_names([(p.episode_id, p.task.task_id) for p in resolution.plans], root)
        if run_dir is not None and run_dir.exists():
            raise InputError(
                f"{run_dir} already exists; use --resume to finish it or choose another --run-dir"
            )
        manifest = new_manifest(run_dir.name if run_dir else new_run_id(), resolution, inputs, command)
        return cls(RunDir.create(root, manifest), manifest, resolution)

    @classmethod
    def derive(cls, manifest: RunManifest, run_dir: Path) -> RunSession:
        """A new run made from a finished one, its manifest given whole, no inputs to resolve
        (``coder-eval regrade``); ``InputError`` when ``run_dir`` exists. Its work goes in a
        ``running`` block."""
        if run_dir.exists():
            raise InputError(f"{run_dir} already exists; choose a new --run-dir")
        return cls(RunDir.create(run_dir.parent, manifest), manifest, resolution=None)

    @contextlib.contextmanager
    def running(self, snapshot_max_mb: float | None) -> Iterator[RunDir]:
        """The block's work is the run's: ``running`` in run.json while it goes, ``interrupted``
        (with why) when it raises, ``completed`` with its snapshot totals when it ends."""
        self.manifest.status = "running"
        self.run.write_manifest(self.manifest)
        with left_interrupted(self.run, self.manifest):
            yield self.run
        self.manifest.status = "completed"
        self.manifest.snapshots = self.run.snapshot_totals(snapshot_max_mb)
        self.run.write_manifest(self.manifest)

    @classmethod
    def reopen(cls, path: Path) -> RunSession:
        """The run at ``path`` to resume, locked (``RunLocked`` while another process writes it);
        ``resume`` then decides what runs again."""
        run = RunDir.open(path, lock=True)
        try:
            manifest = run.read_manifest()
            if manifest.regraded_from is not None:
                raise InputError(
                    f"{path} was made by coder-eval regrade from {manifest.regraded_from.run_dir}; its "
                    "agents never run again: regrade that run again into a new --run-dir"
                )
            if manifest.replayed_from is not None:
                raise InputError(
                    f"{path} was made by coder-eval replay from {manifest.replayed_from.run_dir}: "
                    "replay that run again into a new --run-dir"
                )
        except BaseException:
            run.release()
            raise
        return cls(run, manifest)

    @property
    def took_over(self) -> Holder | None:
        """The dead process whose lock this session took over, if any."""
        return self.run.lock.previous if self.run.lock is not None else None

    @property
    def resolution(self) -> Resolution:
        if self._resolution is None:
            self.resume()
        assert self._resolution is not None
        return self._resolution

    def resume(
        self, inputs: RunInputs | None = None, *, replan: bool = False, retry_invalid: bool = False
    ) -> ResumeDecision:
        """Rebuild the plan from the inputs the run started with (``inputs`` given again must agree
        with them) and decide what runs again (``ResumeRefused`` when tasks changed, unless
        ``replan``); the decision is recorded in the manifest."""
        stored = RunInputs.model_validate((self.manifest.inputs or InputsRecord()).model_dump())
        self._resolution = (inputs or RunInputs()).over(stored).resolve()
        self.decision = decide_resume(
            self.run, self.manifest, self._resolution.plans, replan=replan, retry_invalid=retry_invalid
        )
        self.manifest.resumes.append(self.decision.record)
        return self.decision

    @property
    def warnings(self) -> list[str]:
        """What the plan should be told before it runs (a driver fallback, ...), each once."""
        return plan_warnings(self.resolution)

    def reap_leftovers(self) -> Reaped:
        """Remove sandboxes and processes of harnesses that died (a crash, ``kill -9``): this run's
        own when resuming, and any left in the temp folder."""
        from coder_eval.sandbox.layout import sandbox_root
        from coder_eval.sandbox.leftovers import reap_dead, reap_logged

        reaped, problems = reap_dead(sandbox_root())
        if self.resuming:
            more, other = reap_logged(self.run.path / SANDBOX_LOG_FILE)
            reaped, problems = reaped + more, problems + other
        return Reaped(reaped, problems)

    @property
    def plans(self) -> list[EpisodePlan]:
        """The episodes, their task files frozen while ``execute`` runs them (``run/frozen.py``)."""
        return self._frozen if self._frozen is not None else self.resolution.plans

    def execute(
        self, batch: Batch = Batch(), progress: Progress | None = None, drive: Drive | None = None
    ) -> BatchSummary:
        """Run the episodes still to run (all of them in a new run; ``drive``: what chooses them,
        as ``coder_eval.run.adaptive`` does), from their task files frozen first (``InputError``,
        before any episode, for files that cannot be: a link out of a task's folder, a folder over
        the cap); ``KeyboardInterrupt`` (or SIGTERM) leaves the run ``interrupted``, and ``reopen``
        + ``resume`` finish it."""
        rerun = self.decision.rerun if self.decision is not None else frozenset()
        batch = replace(batch, resume=self.resuming, rerun=rerun)
        with freeze(self.resolution.plans, batch.placement.executor) as frozen:
            self._frozen = frozen.plans
            if not self.resuming:  # run.json's hashes: of the bytes the episodes run
                self.manifest.task_hashes = frozen.content_hashes(self.resolution)
            try:
                self.batch = execute(self.run, self.manifest, frozen.plans, batch, progress or Quiet(), drive)
            finally:
                self._frozen = None
        self.max_cost = batch.max_cost
        return self.batch

    def totals(self) -> Totals:
        """The run's outcomes, read back from its directory."""
        kept = self.batch.skipped_done if self.resuming and self.batch is not None else None
        return Totals(summarize_run(self.run), kept, skill_lines(self.run, self.resolution))

    def finish(
        self,
        after: AfterRun = AfterRun(),
        totals: Totals | None = None,
        on_reports: Callable[[list[str]], None] | None = None,
    ) -> RunResult:
        """Headline, gates, JUnit and reports; the result says what each did, and the exit code."""
        totals = totals or self.totals()
        ran = sum(self.batch.outcomes.values()) if self.batch is not None else 0
        nothing_new = self.resuming and ran == 0
        finished = finish_run(
            self.run, self.manifest, self.resolution, after, totals.summary, on_reports, nothing_new
        )
        return RunResult(
            self.run.path,
            totals.summary,
            finished,
            self.batch or BatchSummary(),
            self.max_cost,
            after.require_all_pass,
        )

    def close(self) -> None:
        """Release the run directory's lock."""
        self.run.release()

    def __enter__(self) -> RunSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def skill_lines(run: RunDir, resolution: Resolution) -> list[str]:
    """One line per arm: the skills its episodes were offered, loaded and invoked (runs with skills)."""
    from coder_eval.agents.spec import plugin_paths
    from coder_eval.episode.skill_record import arm_lines

    if not any(plugin_paths(p.task.agent) for p in resolution.plans):
        return []
    done = run.finished_episodes()
    ends = {
        v: [done[p.episode_id] for p in resolution.plans if p.variant_id == v and p.episode_id in done]
        for v in resolution.experiment.variant_ids
    }
    return list(arm_lines(ends))


def new_manifest(
    run_id: str, resolution: Resolution, inputs: RunInputs, command: Sequence[str] | None = None
) -> RunManifest:
    """A new run's manifest: its plan, the inputs it started with, what its experiment resolved to."""
    experiment, plans = resolution.experiment, resolution.plans
    return RunManifest(
        run_id=run_id,
        experiment_id=experiment.experiment_id,
        description=experiment.description,
        command=list(sys.argv if command is None else command),
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
        inputs=inputs.stored(resolution),
        experiment=experiment_record(resolution),
        source=source_of([*map(Path, inputs.paths or []), *filter(None, [resolution.experiment.path])]),
        task_hashes=task_content_hashes(resolution),
    )


def experiment_record(resolution: Resolution) -> ExperimentRecord:
    """The experiment file and, per variant, what it resolved to (agents and models over its tasks)."""
    variants = []
    for variant in resolution.experiment.variants:
        tasks = [p.task for p in resolution.plans if p.variant_id == variant.variant_id]
        variants.append(
            VariantRecord(
                variant_id=variant.variant_id,
                description=variant.description,
                repeats=resolution.repeats[variant.variant_id],
                agents=sorted({t.agent.kind for t in tasks}),
                models=sorted({t.agent.model or "default" for t in tasks}),
            )
        )
    path = resolution.experiment.path
    compare = CompareRecord.model_validate(resolution.experiment.compare.model_dump())  # the headline's tasks
    return ExperimentRecord(path=str(path) if path else None, variants=variants, compare=compare)
