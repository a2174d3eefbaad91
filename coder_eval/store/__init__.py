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
"""

from coder_eval.store.connection import DEFAULT_STORE, RunStore, default_store
from coder_eval.store.history import RunFilter, list_runs, load_store, run_ids
from coder_eval.store.index import IndexReport, index_run, index_runs

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
