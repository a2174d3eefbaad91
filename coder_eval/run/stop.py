"""How a run that cannot go on is left: ``interrupted`` in ``run.json``, with one line saying why.

Example::

    with left_interrupted(run, manifest):
        summary = asyncio.run(run_batch(plans, run, run_id=manifest.run_id))
    # Ctrl-C, SIGTERM, a run directory that cannot be written, a lost dask cluster, a bug: the
    # manifest says interrupted, and a full disk or a lost cluster is raised again with what to do

Whatever stops a batch, the manifest never stays ``running``: it is set to ``interrupted`` (on a full
disk the run's reserve makes room for that, see ``run_dir.py``). A ``RunWriteError`` (exit 6) and an
``ExecutorLost`` (exit 130) are raised again with the way out appended: ``--resume`` once the
directory is writable, or against a cluster that answers. Only a read-only run directory can keep
``run.json`` from saying so, and the message says that too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from coder_eval.errors import ExecutorLost, RunWriteError
from coder_eval.run_dir import RunDir, RunManifest


@contextlib.contextmanager
def left_interrupted(run: RunDir, manifest: RunManifest) -> Iterator[None]:
    """Set ``manifest`` to ``interrupted`` when the block raises (see the module docstring)."""
    try:
        yield
    except BaseException as exc:
        manifest.status = "interrupted"
        unwritten = None
        try:
            run.write_manifest(manifest)
        except RunWriteError as again:
            unwritten = again
        if isinstance(exc, RunWriteError | ExecutorLost):
            raise _with_way_out(exc, run, unwritten) from exc
        raise


def _with_way_out(
    exc: RunWriteError | ExecutorLost, run: RunDir, unwritten: RunWriteError | None
) -> RunWriteError | ExecutorLost:
    resume = f"coder-eval run --resume --run-dir {run.path}"
    state = (
        f"run.json could not be set to interrupted either ({unwritten.reason})"
        if unwritten is not None
        else "the run is left interrupted"
    )
    if isinstance(exc, RunWriteError):
        return RunWriteError(
            exc.path,
            f"{exc.reason}; no more episodes were started and {state}: make room (or make the run "
            f"directory writable), then {resume}",
        )
    return ExecutorLost(f"{exc}; {state}: {resume} --executor dask, on a cluster that answers")
