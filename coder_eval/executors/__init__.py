"""Executors: where a run's episodes run. ``EXECUTORS`` is the one table of them.

Example::

    check_executor("dask", "tcp://10.0.0.5:8786")   # InputError: dask missing, or no scheduler there
    async with open_executor("dask", slots=4) as executor:
        summary = await run_batch(plans, run, run_id=run_id, concurrency=4, executor=executor)

``local`` runs episodes in this process's event loop; ``dask`` on a dask.distributed cluster (a
LocalCluster of ``slots`` worker processes, one episode each, or the running cluster at
``scheduler``), whose workers hand each trajectory back to this process. A new executor is one
module (or package) with an ``open_<name>(slots, scheduler)`` context manager, and one row here.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, NamedTuple, cast

from coder_eval.errors import InputError, did_you_mean
from coder_eval.executors.base import Executor
from coder_eval.executors.local import LocalExecutor
from coder_eval.version import pip_install

ExecutorName = Literal["local", "dask"]


class ExecutorKind(NamedTuple):
    """One row of the table: how to open the executor, and what it needs.

    Example: ``ExecutorKind("coder_eval.executors.dask.executor:open_dask", extra="dask",
    scheduler_check="coder_eval.executors.dask.executor:check_scheduler")``.
    """

    opener: str
    """``"module:function"``: ``function(slots=, scheduler=)`` returns an async context manager of
    an ``Executor``; imported only when the executor is chosen."""
    extra: str | None = None
    """The optional extra (``pip install 'coder-eval-toolkit[EXTRA]'``) its module needs."""
    scheduler_check: str | None = None
    """``"module:function"``: an async check that a scheduler answers (executors that take one)."""


EXECUTORS: dict[str, ExecutorKind] = {
    "local": ExecutorKind("coder_eval.executors.local:open_local"),
    "dask": ExecutorKind(
        "coder_eval.executors.dask.executor:open_dask",
        extra="dask",
        scheduler_check="coder_eval.executors.dask.executor:check_scheduler",
    ),
}
"""Each executor by name (``--executor NAME``)."""

__all__ = [
    "EXECUTORS",
    "Executor",
    "ExecutorKind",
    "ExecutorName",
    "LocalExecutor",
    "check_executor",
    "open_executor",
]


def check_executor(name: str, scheduler: str | None = None) -> ExecutorName:
    """The executor ``name``, checked before anything runs: known, its extra installed, and a
    scheduler where one is given answering (``InputError``, exit 2, otherwise)."""
    kind = EXECUTORS.get(name)
    if kind is None:
        raise InputError(f"executor {name!r}: choose {' or '.join(EXECUTORS)}{did_you_mean(name, EXECUTORS)}")
    if scheduler is not None and kind.scheduler_check is None:
        takers = " or ".join(n for n, k in EXECUTORS.items() if k.scheduler_check)
        raise InputError(f"a scheduler is for the {takers} executor, not {name!r}")
    _load(name, kind.opener)
    if scheduler is not None and kind.scheduler_check is not None:
        check = cast(Callable[[str], Coroutine[Any, Any, None]], _load(name, kind.scheduler_check))
        asyncio.run(check(scheduler))
    return cast(ExecutorName, name)


def open_executor(
    name: ExecutorName, *, slots: int = 1, scheduler: str | None = None
) -> AbstractAsyncContextManager[Executor]:
    """Start the executor (and, for ``dask`` without ``scheduler``, a LocalCluster of ``slots``
    one-episode workers); leaving the block stops what was started."""
    opener = cast(Callable[..., AbstractAsyncContextManager[Executor]], _load(name, EXECUTORS[name].opener))
    return opener(slots=slots, scheduler=scheduler)


def _load(name: str, target: str) -> Any:
    """Import ``"module:attribute"`` of executor ``name``; a missing extra is an ``InputError``."""
    module, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except ImportError as exc:
        extra = EXECUTORS[name].extra
        raise InputError(
            f"the {name} executor needs the {extra!r} extra ({exc.name or exc} is not installed): "
            + pip_install(str(extra))
        ) from exc
