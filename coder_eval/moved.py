"""Modules that moved, still importable from where they were, with a ``DeprecationWarning``.

Example::

    import coder_eval.report            # DeprecationWarning: coder_eval.report moved to coder_eval.run.render
    from coder_eval.analysis.notebook import md_text   # coder_eval.analysis.views.notebook's

``import coder_eval`` puts :class:`MovedFinder` last on ``sys.meta_path``, so it answers only for a
name no module of the package has any more: the old name is the new module itself (one object, one
state), never a copy. A name that is a module again (``coder_eval.analysis.frames`` is a package of
its own now) is that module, and an old module named like a function of its package
(``coder_eval.analysis.compare``) has no row: importing it would hide ``coder_eval.analysis.compare``,
the function. Drop a row a release after its move.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

MOVED: dict[str, str] = {
    "coder_eval.analysis.agreement": "coder_eval.analysis.judging.agreement",
    "coder_eval.analysis.amounts": "coder_eval.analysis.stats.amounts",
    "coder_eval.analysis.baseline": "coder_eval.analysis.answer.baseline_run",
    "coder_eval.analysis.calibration": "coder_eval.analysis.judging.calibration",
    "coder_eval.analysis.changes": "coder_eval.analysis.answer.changes",
    "coder_eval.analysis.columns": "coder_eval.analysis.frames.columns",
    "coder_eval.analysis.comparison": "coder_eval.analysis.stats.comparison",
    "coder_eval.analysis.completion": "coder_eval.analysis.answer.completion",
    "coder_eval.analysis.cost": "coder_eval.analysis.stats.cost",
    "coder_eval.analysis.estimate": "coder_eval.analysis.stats.estimate",
    "coder_eval.analysis.explorer_views": "coder_eval.analysis.views.explorer",
    "coder_eval.analysis.intervals": "coder_eval.analysis.stats.intervals",
    "coder_eval.analysis.inversion": "coder_eval.analysis.stats.inversion",
    "coder_eval.analysis.items": "coder_eval.analysis.stats.items",
    "coder_eval.analysis.labels": "coder_eval.analysis.judging.labels",
    "coder_eval.analysis.load": "coder_eval.analysis.frames.load",
    "coder_eval.analysis.markdown": "coder_eval.analysis.views.markdown",
    "coder_eval.analysis.metrics": "coder_eval.analysis.stats.metrics",
    "coder_eval.analysis.mixed": "coder_eval.analysis.stats.mixed",
    "coder_eval.analysis.multiplicity": "coder_eval.analysis.stats.multiplicity",
    "coder_eval.analysis.notebook": "coder_eval.analysis.views.notebook",
    "coder_eval.analysis.paired": "coder_eval.analysis.stats.paired",
    "coder_eval.analysis.passk": "coder_eval.analysis.stats.passk",
    "coder_eval.analysis.planning": "coder_eval.analysis.answer.planning",
    "coder_eval.analysis.plots": "coder_eval.analysis.views.plots",
    "coder_eval.analysis.power": "coder_eval.analysis.stats.power",
    "coder_eval.analysis.power_model": "coder_eval.analysis.stats.power_model",
    "coder_eval.analysis.selection": "coder_eval.analysis.stats.headline_tasks",
    "coder_eval.analysis.sequential": "coder_eval.analysis.stats.sequential",
    "coder_eval.analysis.sequential_forecast": "coder_eval.analysis.stats.forecast",
    "coder_eval.analysis.sequential_report": "coder_eval.analysis.views.sequential_report",
    "coder_eval.analysis.signflip": "coder_eval.analysis.stats.signflip",
    "coder_eval.analysis.summary": "coder_eval.analysis.stats.summary",
    "coder_eval.analysis.tools": "coder_eval.analysis.stats.tool_usage",
    "coder_eval.analysis.widgets": "coder_eval.analysis.views.widgets",
    "coder_eval.analysis.wording": "coder_eval.analysis.answer.wording",
    "coder_eval.criteria.judges.baseline": "coder_eval.criteria.judges.baseline_judge",
    "coder_eval.criteria.patterns": "coder_eval.patterns",
    "coder_eval.dataset": "coder_eval.task.dataset",
    "coder_eval.episode.grader_files": "coder_eval.criteria.grader_files",
    "coder_eval.episode.limits": "coder_eval.task.limits",
    "coder_eval.episode.template_files": "coder_eval.sandbox.template_files",
    "coder_eval.executors.bundle_sender": "coder_eval.executors.dask.bundle_sender",
    "coder_eval.executors.bundles": "coder_eval.executors.dask.bundles",
    "coder_eval.executors.cluster_watch": "coder_eval.executors.dask.cluster_watch",
    "coder_eval.executors.dask_worker": "coder_eval.executors.dask.worker",
    "coder_eval.executors.episode_files": "coder_eval.executors.dask.episode_files",
    "coder_eval.executors.live_lines": "coder_eval.executors.dask.live_lines",
    "coder_eval.executors.worker_check": "coder_eval.executors.dask.worker_check",
    "coder_eval.experiment.selection": "coder_eval.experiment.task_selection",
    "coder_eval.gates": "coder_eval.run.gates",
    "coder_eval.interop.log_readers.inspect_logs": "coder_eval.analysis.frames.inspect",
    "coder_eval.junit": "coder_eval.run.junit",
    "coder_eval.provenance": "coder_eval.run.provenance",
    "coder_eval.regrade.verdicts": "coder_eval.regrade.criteria_plan",
    "coder_eval.report": "coder_eval.run.render",
    "coder_eval.report_files": "coder_eval.run.render_files",
    "coder_eval.resume": "coder_eval.run.resume",
    "coder_eval.row_selection": "coder_eval.task.rows",
    "coder_eval.run_stop": "coder_eval.run.stop",
    "coder_eval.run_summary": "coder_eval.run.summary",
    "coder_eval.sandbox.plugins": "coder_eval.sandbox.staged_plugins",
    "coder_eval.sandbox.verdicts": "coder_eval.sandbox.pytest_reports",
    "coder_eval.scripted.selection": "coder_eval.scripted.turns",
    "coder_eval.simulation": "coder_eval.episode.simulator",
    "coder_eval.store.baseline": "coder_eval.store.baseline_ref",
    "coder_eval.task_files": "coder_eval.task.files",
    "coder_eval.tools": "coder_eval.agents.tools",
    "coder_eval.validate": "coder_eval.run.validate",
    "coder_eval.viewer": "coder_eval.cli.viewer",
}
"""Old module name -> where it lives now (the layout of CONTRIBUTING.md)."""


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds an old module name in ``MOVED`` and hands back the module that replaced it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, _Alias(fullname, new))


class _Alias(importlib.abc.Loader):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{self.old} moved to {self.new}; import it from there", DeprecationWarning, stacklevel=2
        )
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module is the new one, already imported."""


def install() -> None:
    """Put the finder last on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedFinder())
