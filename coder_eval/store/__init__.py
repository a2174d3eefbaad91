"""The run store: many runs' episodes, criteria, tool calls and messages in one DuckDB file, with
each run's provenance (task content hashes, agents, models, variants, coder_eval version, the suite's
git commit and branch). The run folders stay the source of truth; the store is an index, rebuilt
from them at any time.

Example::

    from coder_eval.store import RunStore, index_runs, list_runs, load_store
    with RunStore.open(Path("runs/history.duckdb")) as store:
        index_runs(store, [Path("runs")]).line()       # '3 runs indexed, 0 unchanged, 0 unreadable'
        list_runs(store)                               # one row per run, newest first
        runs = load_store(store)                       # coder_eval.analysis.Runs of every run

Names resolve on first use: a run that only asks where its store is (``connection.store_for``) imports
DuckDB alone, not pandas or the analysis frames.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coder_eval.lazy import lazy_names

if TYPE_CHECKING:
    from coder_eval.store.connection import DEFAULT_STORE, RunStore, default_store
    from coder_eval.store.history import RunFilter, list_runs, load_store, run_ids
    from coder_eval.store.index import IndexReport, index_run, index_runs

LAZY: dict[str, str] = {
    "DEFAULT_STORE": "coder_eval.store.connection",
    "RunStore": "coder_eval.store.connection",
    "default_store": "coder_eval.store.connection",
    "RunFilter": "coder_eval.store.history",
    "list_runs": "coder_eval.store.history",
    "load_store": "coder_eval.store.history",
    "run_ids": "coder_eval.store.history",
    "IndexReport": "coder_eval.store.index",
    "index_run": "coder_eval.store.index",
    "index_runs": "coder_eval.store.index",
}
"""The public names (``__all__``), each imported from its module on first use."""

if not TYPE_CHECKING:  # for the type checker the names are the imports above
    __getattr__, __dir__ = lazy_names(__name__, globals(), LAZY)


__all__ = [
    "DEFAULT_STORE",
    "IndexReport",
    "RunFilter",
    "RunStore",
    "default_store",
    "index_run",
    "index_runs",
    "list_runs",
    "load_store",
    "run_ids",
]
