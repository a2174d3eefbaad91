"""One Python kernel that renders a run's reports in turn: the kernel starts, and the analysis stack
is imported, once for all of them instead of once per report.

Example::

    with ReportKernel() as kernel:
        for template in ("run_report", "compare_report"):
            render_report([Path("runs/latest")], template, kernel=kernel)

Each notebook still starts from a clean slate: a first cell (``reset_cell``, run by papermill with
the notebook and removed from the rendered notebook after) makes the kernel forget every name the
last notebook defined (IPython's ``reset``, with a new history session whose cells count from 1 as a
new kernel's do), close its figures, put matplotlib's settings, the warning filters and pandas'
options back as they were before the first report, and move to the report's folder (papermill's
``cwd``). What stays is what importing left behind: the modules themselves. A kernel that died, or
that a cell timeout left busy, is replaced before the next report.

``execute`` runs a notebook with papermill's nbclient engine, less its saves: papermill writes the
whole notebook (validated against its schema) before and after every cell while the kernel waits;
here it is written once, when the notebook ended, well or not.
"""

from __future__ import annotations

import functools
import math
import os
import queue
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from coder_eval.lazy import without_iri_format
from coder_eval.run.render_files import mark_failed, untyped

KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]
"""Keeps the kernel's start-up notices (a local TCP transport warning) out of the command's output."""
STARTUP_TIMEOUT = 60
"""Seconds a kernel may take to answer its first request (papermill's default)."""
RESET_TAG = "coder-eval-reset"
"""The tag of the first cell ``reset_cell`` makes (removed from the rendered notebook)."""

RESET = """\
import os as _os, warnings as _warnings
import matplotlib as _mpl, matplotlib.pyplot as _plt, pandas as _pd
_shell = get_ipython()
if not hasattr(_shell, "_coder_eval_rc"):  # the kernel's first report: its settings are the defaults
    _shell._coder_eval_rc = dict(_mpl.rcParams)
    _shell._coder_eval_warnings = list(_warnings.filters)
_plt.close("all")
_mpl.rcParams.update(_shell._coder_eval_rc)
_warnings.filters[:] = _shell._coder_eval_warnings
with _warnings.catch_warnings():
    _warnings.simplefilter("ignore")
    _pd.reset_option("all")
_os.chdir({folder!r})
_shell.reset(new_session=True)  # %reset -f, and a new history session whose cells count from 1
"""
"""The state one report could leave for the next, put back before each."""
WARM = """\
import matplotlib.pyplot, pandas
import coder_eval.analysis.answer.engine, coder_eval.analysis.views.notebook, coder_eval.analysis.views.plots
"""
"""What every report imports, imported as soon as the kernel is up (while the reports are prepared)."""


class ReportKernel:
    """A ``python3`` kernel (this interpreter's) kept for several reports; close it when done."""

    def __init__(self) -> None:
        self.manager: Any = None
        self._spoiled = False
        self._warming: Any = None
        self._client: Any = None

    def start(self, folder: Path) -> None:
        """Start the kernel now, in ``folder`` (made if missing), and have it import the analysis
        stack while this process prepares the first report (nothing waits for either here)."""
        from jupyter_core.utils import run_sync

        client = untyped("jupyter_client.blocking").BlockingKernelClient

        manager = self.ready()
        if manager.has_kernel:
            return
        folder.mkdir(parents=True, exist_ok=True)
        run_sync(manager.start_kernel)(extra_arguments=KERNEL_ARGUMENTS, cwd=os.fspath(folder))
        self._warming = client()
        self._warming.load_connection_info(manager.get_connection_info())
        self._warming.start_channels()
        self._warming.execute(WARM, silent=True, store_history=False)

    def warmed(self, timeout: float = 120) -> bool:
        """Wait until the kernel ``start`` started has imported the analysis stack; False when it was
        not started here or did not answer within ``timeout`` seconds."""
        if self._warming is None:
            return False
        try:
            self._warming.get_shell_msg(timeout=timeout)  # the reply to WARM
        except queue.Empty:
            return False
        return True

    def ready(self) -> Any:
        """The kernel manager to hand papermill (``km``): the kernel of the last report, or a new
        one (started by papermill) when there is none yet or the last one cannot be trusted."""
        from jupyter_client.manager import AsyncKernelManager
        from jupyter_core.utils import run_sync

        running = self.manager is not None and self.manager.has_kernel
        if running and (self._spoiled or not run_sync(self.manager.is_alive)()):
            self.close()
        if self.manager is None:
            self.manager, self._spoiled = AsyncKernelManager(kernel_name="python3"), False
        return self.manager

    def client(self) -> Any:
        """The kernel client papermill uses (``kc``): connected once per kernel, where nbclient's own
        would be connected before every notebook (waiting at least 0.2 s for the kernel's messages to
        stop each time); None when there is no kernel yet, or it does not answer (papermill's own
        client then says why)."""
        from jupyter_core.utils import run_sync

        manager = self.ready()
        if self._client is None and manager.has_kernel:
            client = manager.client()
            client.start_channels()
            try:
                run_sync(client.wait_for_ready)(timeout=STARTUP_TIMEOUT)
            except (RuntimeError, TimeoutError):  # died or silent: papermill reports it
                client.stop_channels()
                return None
            self._client = client
        return self._client

    def spoiled(self) -> None:
        """The last report timed out or killed its kernel: the next one gets a new kernel."""
        self._spoiled = True

    def close(self) -> None:
        """Shut the kernel down (idempotent)."""
        from jupyter_core.utils import run_sync

        manager, self.manager = self.manager, None
        if self._client is not None:
            self._client.stop_channels()
            self._client = None
        if self._warming is not None:
            self._warming.stop_channels()
            self._warming = None
        if manager is not None and manager.has_kernel:
            run_sync(manager.shutdown_kernel)(now=True)

    def __enter__(self) -> ReportKernel:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def reset_cell(folder: Path) -> Any:
    """The first cell of a notebook run in a shared kernel (an ``nbformat`` code cell)."""
    cell = untyped("nbformat.v4").new_code_cell(RESET.format(folder=os.fspath(folder.resolve())))
    cell.metadata["tags"] = [RESET_TAG]
    return cell


def without_reset_cell(notebook: Path) -> None:
    """Remove the reset cell from an executed notebook file (what it did is no part of the report)."""
    nbformat = untyped("nbformat")
    nb = nbformat.read(notebook, as_version=4)
    kept = [c for c in nb.cells if RESET_TAG not in c.get("metadata", {}).get("tags", [])]
    if len(kept) != len(nb.cells):
        nb.cells = kept
        nbformat.write(nb, notebook)


def execute(
    notebook: Path,
    output: Path,
    values: Mapping[str, Any],
    timeout: float,
    kernel: ReportKernel | None = None,
) -> str | None:
    """Run a py:percent notebook with papermill (cwd: the output folder), in ``kernel`` when given;
    the error text, or None."""
    without_iri_format()
    import jupytext
    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    nb = jupytext.read(notebook)
    shared = {}
    if kernel is not None:
        nb.cells.insert(0, reset_cell(output.parent))
        shared["km"] = kernel.ready()
        shared["kc"] = kernel.client()
    with tempfile.TemporaryDirectory(prefix="coder-eval-report-") as tmp:
        source = Path(tmp) / notebook.with_suffix(".ipynb").name
        jupytext.write(nb, source)
        try:
            papermill.execute_notebook(
                source,
                output,
                parameters=dict(values),
                engine_name=saved_at_end_engine(),
                kernel_name="python3",
                language="python",
                cwd=output.parent,
                progress_bar=False,
                execution_timeout=max(1, math.ceil(timeout)),
                extra_arguments=KERNEL_ARGUMENTS,
                **shared,
            )
        except papermill.PapermillExecutionError as exc:
            return f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
        except CellTimeoutError:
            return _kernel_lost(kernel, output, f"a cell ran longer than the {timeout:g} s timeout")
        except DeadKernelError as exc:
            return _kernel_lost(kernel, output, f"the kernel died: {exc}")
        finally:
            if kernel is not None and output.exists():
                without_reset_cell(output)
    return None


def _kernel_lost(kernel: ReportKernel | None, output: Path, error: str) -> str:
    """A report whose kernel cannot go on: marked failed, and a shared kernel replaced for the next."""
    if kernel is not None:
        kernel.spoiled()
    return mark_failed(output, error)


ENGINE = "coder_eval_saved_at_end"


@functools.cache
def saved_at_end_engine() -> str:
    """papermill's nbclient engine registered as ``ENGINE``, writing the notebook only when it ended
    (papermill's own writes it twice per cell, on the kernel's time) and running it through the
    kernel client given as ``kc`` (``ReportKernel.client``); returns its name."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines
    from papermill.log import logger
    from papermill.utils import merge_kwargs, remove_args

    class SavedAtEnd(NotebookExecutionManager):  # type: ignore[misc]
        def save(self, **kwargs: Any) -> None:
            if self.end_time is not None:  # set by notebook_complete, after the last cell or a failure
                super().save(**kwargs)

    class Engine(NBClientEngine):  # type: ignore[misc]
        @classmethod
        def execute_notebook(  # papermill's Engine.execute_notebook, with the manager above
            cls, nb: Any, kernel_name: str, output_path: Any = None, progress_bar: bool = True,
            log_output: bool = False, autosave_cell_every: int = 30, **kwargs: Any,
        ) -> Any:  # fmt: skip
            manager = SavedAtEnd(nb, output_path=output_path, progress_bar=progress_bar,
                                 log_output=log_output, autosave_cell_every=autosave_cell_every)  # fmt: skip
            manager.notebook_start()
            try:
                cls.execute_managed_notebook(manager, kernel_name, log_output=log_output, **kwargs)
            finally:
                manager.cleanup_pbar()
                manager.notebook_complete()
            return manager.nb

        @classmethod
        def execute_managed_notebook(  # papermill's NBClientEngine's, with a kernel client given
            cls, nb_man: Any, kernel_name: str, log_output: bool = False, stdout_file: Any = None,
            stderr_file: Any = None, start_timeout: int = STARTUP_TIMEOUT, execution_timeout: Any = None,
            kc: Any = None, **kwargs: Any,
        ) -> Any:  # fmt: skip
            kwargs = remove_args(["input_path", "timeout", "startup_timeout"], **kwargs)
            client = PapermillNotebookClient(
                nb_man, **merge_kwargs(
                    kwargs, timeout=execution_timeout, startup_timeout=start_timeout, kernel_name=kernel_name,
                    log=logger, log_output=log_output, stdout_file=stdout_file, stderr_file=stderr_file,
                ),
            )  # fmt: skip
            client.kc = kc  # None: nbclient connects one of its own
            return client.execute()

    papermill_engines.register(ENGINE, Engine)
    return ENGINE
