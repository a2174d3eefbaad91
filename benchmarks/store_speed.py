"""How fast the run store indexes and answers, against loading the same run folders with ``load_runs``.

Run: ``python benchmarks/store_speed.py [--episodes 100000] [--runs 10] [--dir DIR]``. Writes ``--runs``
run folders holding ``--episodes`` synthetic trajectories in all (a start, two messages, a tool call
and its result, a criterion, an end: the rows of all four frames), then times:

- indexing every run into a new store (``index_runs``), and indexing again (nothing changed: the
  incremental pass only reads each run's manifest and file list);
- ``load_runs`` on the folders against ``load_store`` on the store: the same frames (checked equal);
- a history question in SQL (each task's pass rate per run on one branch) and ``list_runs`` with a filter.

Loads are the median of three; the ratio is load_runs / load_store, measured in the same process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from coder_eval.analysis import load_runs
from coder_eval.manifest import PlannedEpisode, SourceRecord
from coder_eval.run_dir import RunDir, RunManifest, episode_id
from coder_eval.store import RunFilter, RunStore, index_runs, list_runs, load_store
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Message,
    Timings,
    ToolCall,
    ToolResult,
    Usage,
)

VARIANTS = 4


def lines(run_id: str, task: str, variant: str, passed: bool) -> bytes:
    """One trajectory's bytes."""
    ep = episode_id(task, variant, 0)
    events = [
        EpisodeStart(run_id=run_id, episode_id=ep, task_id=task, variant_id=variant, seed=0,
                     agent={"kind": "claude-code", "model": "claude-x"}, task_hash=f"sha256:{task}"),
        Message(role="assistant", model="claude-x", usage=Usage(input_tokens=900, output_tokens=80),
                content=[{"type": "text", "text": "Let me run the tests."}]),
        ToolCall(id="c1", name="Bash", input={"command": "pytest -q"}),
        ToolResult(id="c1", output="1 passed", output_chars=8, duration_s=0.4),
        Message(role="user", content=[{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]),
        CriterionResult(criterion_id="tests", kind="hidden_tests", score=float(passed), passed=passed),
        EpisodeEnd(outcome="pass" if passed else "fail", status="completed", score=float(passed),
                   timings=Timings(total_s=30.0), usage=Usage(input_tokens=900), cost_usd=0.1, num_turns=2),
    ]  # fmt: skip
    return b"".join(e.model_dump_json().encode() + b"\n" for e in events)


def generate(root: Path, n_episodes: int, n_runs: int) -> list[Path]:
    """``n_runs`` run folders of ``n_episodes / n_runs`` trajectories each, on branch main."""
    per_run = n_episodes // n_runs
    tasks = [f"task{i}" for i in range(per_run // VARIANTS)]
    folders = []
    for r in range(n_runs):
        run_id = f"run{r:03d}"
        plan = [(t, f"v{v}") for t in tasks for v in range(VARIANTS)]
        manifest = RunManifest(
            run_id=run_id, variants=[f"v{v}" for v in range(VARIANTS)], tasks=tasks, status="completed",
            episodes=[PlannedEpisode(episode_id=episode_id(t, v, 0), task_id=t, variant_id=v, repeat=0)
                      for t, v in plan],
            source=SourceRecord(git_commit=f"c{r}", git_branch="main"),
        )  # fmt: skip
        run = RunDir.create(root, manifest)
        for i, (task, variant) in enumerate(plan):
            run.episode_path(episode_id(task, variant, 0)).write_bytes(
                lines(run_id, task, variant, (i + r) % 3 > 0)
            )
        run.release()
        folders.append(run.path)
    return folders


def timed(what: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = what()
    return time.perf_counter() - started, result


def median_of_three(what: Callable[[], Any]) -> tuple[float, Any]:
    runs = [timed(what) for _ in range(3)]
    return statistics.median(t for t, _ in runs), runs[-1][1]


TASK_RATES = """
SELECT e.run_id, e.task_id, avg(CAST(e.passed AS DOUBLE)) AS pass_rate, count(*) AS n
FROM episodes e JOIN runs r USING (run_id) WHERE r.git_branch = 'main' AND e.outcome != 'invalid'
GROUP BY e.run_id, e.task_id
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--dir", type=Path, help="Write the runs under this folder (default: a temporary one)."
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        written, folders = timed(lambda: generate(root / "runs", args.episodes, args.runs))
        with RunStore.open(root / "history.duckdb") as store:
            index_s, report = timed(lambda: index_runs(store, [root / "runs"]))
            again_s, again = timed(lambda: index_runs(store, [root / "runs"]))
            store_s, stored = median_of_three(lambda: load_store(store))
            sql_s, rates = median_of_three(lambda: store.con.execute(TASK_RATES).df())
            list_s, listed = median_of_three(lambda: list_runs(store, RunFilter(branch="main", task="task0")))
        folders_s, loaded = median_of_three(lambda: load_runs(folders))
        for name in ("episodes", "criteria", "tool_calls", "messages"):
            pd.testing.assert_frame_equal(getattr(stored, name), getattr(loaded, name))
        megabytes = (root / "history.duckdb").stat().st_size / 1e6
    n = len(stored.episodes)
    print(f"{n} episodes in {len(folders)} runs (written in {written:.1f} s), frames equal from both")
    print(f"index_runs, new store:     {index_s:.2f} s ({n / index_s:,.0f} episodes/s; {report.line()})")
    print(f"index_runs, nothing new:   {again_s:.3f} s ({again.line()})")
    print(f"store file:                {megabytes:.0f} MB")
    print(f"load_runs (folders):       {folders_s:.2f} s")
    print(f"load_store (the store):    {store_s:.2f} s")
    print(f"ratio load_runs/load_store: {folders_s / store_s:.1f}x")
    print(f"SQL, pass rate per task and run on main: {sql_s * 1000:.0f} ms ({len(rates)} rows)")
    print(f"list_runs(branch, task):   {list_s * 1000:.0f} ms ({len(listed)} runs)")
    print(json.dumps({"episodes": n, "index_s": index_s, "reindex_s": again_s, "load_runs_s": folders_s,
                      "load_store_s": store_s, "sql_ms": sql_s * 1000}))  # fmt: skip


if __name__ == "__main__":
    main()
