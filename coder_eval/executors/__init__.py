"""Executors: where a run's episodes run. ``EXECUTORS`` is the one table of them.

Example::

    check_executor("dask", "tcp://10.0.0.5:8786")   # InputError: dask missing, or no scheduler there
    async with open_executor("dask", slots=4) as executor:
        summary = await run_batch(plans, run, run_id=run_id, concurrency=4, executor=executor)

``local`` runs episodes in this process's event loop; ``dask`` on a dask.distributed cluster (a
LocalCluster of ``slots`` worker processes, one episode each, or the running cluster at
``scheduler``), whose workers hand each trajectory back to this process.
"""

from __future__ import annotations

import asyncio
import importlib
from contextlib import AbstractAsyncContextManager
from typing import Literal

from coder_eval.errors import InputError
from coder_eval.executors.base import Executor
from coder_eval.executors.local import LocalExecutor, open_local

ExecutorName = Literal["local", "dask"]

EXECUTORS: dict[str, str | None] = {"local": None, "dask": "dask"}
"""Each executor, and the optional extra (``pip install 'coder_eval[EXTRA]'``) it needs."""

__all__ = ["EXECUTORS", "Executor", "ExecutorName", "LocalExecutor", "check_executor", "open_executor"]


def check_executor(name: ExecutorName, scheduler: str | None = None) -> None:
    """Fail before anything runs when ``name`` cannot run: its extra is missing, or no dask scheduler
    answers at ``scheduler``."""
    check_installed(name)
    if scheduler is not None:
        from coder_eval.executors.dask import check_scheduler  # installed: checked just above

        asyncio.run(check_scheduler(scheduler))


def check_installed(name: ExecutorName) -> None:
    """Fail before anything runs when the packages of ``name``'s extra are missing."""
    extra = EXECUTORS[name]
    if extra is None:
        return
    try:
        importlib.import_module(f"coder_eval.executors.{name}")
    except ImportError as exc:
        raise InputError(
            f"the {name} executor needs the {extra!r} extra ({exc.name or exc} is not installed): "
            f"pip install 'coder_eval[{extra}]'"
        ) from exc


def open_executor(
    name: ExecutorName, *, slots: int = 1, scheduler: str | None = None
) -> AbstractAsyncContextManager[Executor]:
    """Start the executor (and, for ``dask`` without ``scheduler``, a LocalCluster of ``slots``
    one-episode workers); leaving the block stops what was started."""
    if name == "local":
        return open_local()
    check_installed(name)
    from coder_eval.executors.dask import open_dask  # an optional extra: imported only when chosen

    return open_dask(workers=slots, scheduler=scheduler)
