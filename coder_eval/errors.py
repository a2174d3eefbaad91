"""The whole coder_eval error tree.

    CoderEvalError                     every error coder_eval raises on purpose
     ├── InputError                    bad user input; the CLI exits with ExitCode.INVALID_INPUT
     │    ├── TaskError                a task file is malformed (file, line, field, what to do)
     │    ├── ExperimentError          an experiment file or override is malformed
     │    ├── PluginError              an installed plugin cannot load, or would shadow another's name
     │    ├── TrajectoryError          a trajectory file cannot be read (e.g. another schema version)
     │    ├── ManifestError            a run directory's run.json cannot be read as a manifest
     │    ├── RunLocked                another process is writing the run directory
     │    ├── ResumeRefused            --resume would mix runs of a task as it was and as it is now
     │    └── StoreError               the run store cannot be opened, or has no run a baseline names
     │         └── StoreBusy           another process holds the run store (waited for, then given up)
     ├── RunWriteError                 a file of the run directory could not be written (exit 6)
     ├── ExecutorLost                  the dask scheduler, or every worker, went away (the run is interrupted)
     ├── SandboxError                  a sandbox could not be made, used or closed
     │    └── WorkspaceFileError       a workspace file cannot be read as asked (the agent's doing)
     │         └── PatternTimeout      an author's pattern ran out of time on the agent's text
     ├── AgentError                    an agent could not run (infra, not the agent's fault)
     ├── GraderError                   a criterion crashed; recorded on the episode, never raised past it
     ├── AnalysisError                 analysis input is wrong (unknown variant, metric or column)
     ├── ReportError                   a report could not be rendered
     └── BudgetExceeded                a run-level budget stopped the run (partial results kept)

Inner code raises; only ``coder_eval.cli`` prints and maps errors to exit codes.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes of ``coder-eval`` (documented in the README)."""

    OK = 0
    GATE_FAILED = 1
    INVALID_INPUT = 2
    BUDGET_STOPPED = 3
    REPORT_FAILED = 4
    NOTHING_MEASURED = 5
    RUN_DIR_UNWRITABLE = 6
    NOT_GATED = 7
    INTERRUPTED = 130


class CoderEvalError(Exception):
    """Root of every error coder_eval raises on purpose."""


class InputError(CoderEvalError):
    """Bad input from the user: the run never started."""


class TaskError(InputError):
    """A task file is malformed.

    Example: ``TaskError("tasks/a.yaml:12: success_criteria[0].pattern: invalid regex ...")``
    """


class ExperimentError(InputError):
    """An experiment file, variant or command-line override is malformed."""


class PluginError(InputError):
    """An installed plugin failed to load, or claims a name or a price another already has.

    Example: ``PluginError("plugin 'acme' (acme_eval.plugin:register) failed to load: ...")``
    """


class TrajectoryError(InputError):
    """A trajectory file cannot be read at all (another schema version, not JSONL)."""


class ManifestError(InputError):
    """``run.json`` is not JSON, not UTF-8, not a coder_eval manifest, or of another schema version."""


class RunLocked(InputError):
    """Another process holds the run directory's lock (it is running, resuming or re-grading it)."""


class ResumeRefused(InputError):
    """``--resume`` was refused: the tasks no longer resolve to what the kept episodes ran."""


class StoreError(InputError):
    """The run store cannot be opened (another schema, another process), or lacks a named run.

    Example: ``StoreError("runs/history.duckdb: no run on branch 'main'; index one first")``
    """


class StoreBusy(StoreError):
    """Another process holds the run store (indexing, say) longer than coder_eval waits for it: a
    baseline gate is not evaluated (``ExitCode.NOT_GATED``), never called a regression."""


class RunWriteError(CoderEvalError):
    """A file of the run directory could not be written (no space, read-only, name too long).

    The run stops launching episodes and is left ``interrupted``; ``--resume`` finishes it once the
    directory is writable. ``path`` is the file that could not be written.
    """

    def __init__(self, path: object, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type[RunWriteError], tuple[object, str]]:
        return type(self), (self.path, self.reason)  # a dask worker's error travels pickled

    @classmethod
    def of(cls, path: object, exc: OSError) -> RunWriteError:
        """From the ``OSError`` of writing ``path``: ``cannot write run.json: No space left on device``."""
        return cls(exc.filename or path, exc.strerror or str(exc))


class ExecutorLost(CoderEvalError):
    """Where the episodes run went away (the dask scheduler, or every worker, for too long): the run
    is left ``interrupted`` and ``--resume`` (against a cluster that answers) finishes it."""


class SandboxError(CoderEvalError):
    """A sandbox could not be created, used or closed."""


class WorkspaceFileError(SandboxError):
    """A workspace file cannot be read as asked: missing, a directory, a link leading out, too big.

    The agent shapes its workspace, so criteria treat this as the agent's failure, not the grader's.
    """


class PatternTimeout(WorkspaceFileError):
    """A pattern ran out of time on text the agent wrote: that criterion fails (the agent's doing)."""


class AgentError(CoderEvalError):
    """An agent could not run for reasons outside the agent's control (infra, auth, transport)."""


class GraderError(CoderEvalError):
    """A criterion could not be evaluated; recorded on the criterion, never aborts a batch."""


class AnalysisError(CoderEvalError):
    """Analysis input is wrong: unknown variant, metric or column, or too little data."""


class ReportError(CoderEvalError):
    """A report template could not be found, parameterised or rendered."""


class BudgetExceeded(CoderEvalError):
    """A run-level budget stopped the run; finished episodes are kept."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ``" (did you mean 'x'?)"`` suffix, or ``""`` when nothing is close.

    Example: ``did_you_mean("sucess_criteria", ["success_criteria"])``
    -> ``" (did you mean 'success_criteria'?)"``
    """
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_name(kind: str, name: str, valid: Iterable[str]) -> str:
    """A message for an unknown name that lists the valid ones, with a did-you-mean."""
    valid = sorted(valid)
    return f"unknown {kind} {name!r}{did_you_mean(name, valid)}; valid: {', '.join(valid)}"
