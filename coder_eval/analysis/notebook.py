"""What the report notebooks call: loading runs, picking the variant pair, links, the summary file.

The templates in ``notebooks/`` stay thin: a parameters cell, then calls into ``coder_eval.analysis``
and these helpers.

Example (a template cell)::

    runs, notes = load_report_runs(run_dirs)
    baseline, candidate = variant_pair(runs.episodes, baseline, candidate)
    write_summary(summary_path, comparisons=comparisons_frame([...]))
"""

from __future__ import annotations

import html
import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from coder_eval.analysis.load import Runs, load_runs
from coder_eval.errors import ReportError

REPORT_METRICS = ("passed", "score", "total_tokens", "cost_usd", "duration_s", "num_turns", "n_tool_calls")
"""The metrics every report shows, in order."""


def jsonable(value: Any) -> Any:
    """Frames, series, dataclasses and numpy scalars as plain JSON values; NaN, ±inf and NA become None.

    Example: ``jsonable(pd.DataFrame({"x": [1.0, float("nan")]}))`` -> ``[{"x": 1.0}, {"x": None}]``
    """
    if isinstance(value, pd.DataFrame):
        return jsonable(value.to_dict("records"))
    if isinstance(value, pd.Series):
        return jsonable(value.to_dict())
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        value = value.item()
    if value is pd.NA or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return value


def write_summary(path: str, **sections: Any) -> None:
    """Write a notebook's headline numbers as JSON (``path == ""`` writes nothing).

    Example (last cell of a template): ``write_summary(summary_path, pass_rate=summarize(episodes))``
    """
    if path:
        text = json.dumps(jsonable(sections), indent=2, sort_keys=True, allow_nan=False)
        Path(path).write_text(text + "\n", encoding="utf-8")


def load_report_runs(run_dirs: str) -> tuple[Runs, list[str]]:
    """``load_runs`` on comma-separated run directories; its warnings are returned as text, not printed.

    Example: ``runs, notes = load_report_runs("runs/a,runs/b")``
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = load_runs([p.strip() for p in run_dirs.split(",") if p.strip()])
    return runs, [str(w.message) for w in caught]


def variant_pair(episodes: pd.DataFrame, baseline: str = "", candidate: str = "") -> tuple[str, str]:
    """(baseline, candidate): names given are kept, blanks become ``baseline`` (else the first variant)
    and the first other variant. ``compare`` checks the names.

    Example: ``variant_pair(runs.episodes)`` -> ``("baseline", "with_skill")``
    """
    variants = list(dict.fromkeys(str(v) for v in episodes["variant_id"]))
    if not variants:
        raise ReportError("a comparison needs two variants; there are no episodes")
    base = baseline or ("baseline" if "baseline" in variants else variants[0])
    cand = candidate or next((v for v in variants if v != base), "")
    if not cand:
        raise ReportError(f"a comparison needs two variants; the runs have only {base!r}")
    return base, cand


def trajectory_links(paths: Sequence[str], base: Path | None = None) -> str:
    """HTML links to trajectory files, relative to ``base`` (the report's folder; default: cwd).

    Example: ``trajectory_links(["/r/run/episodes/t--a--r0.jsonl"])`` -> ``'<a href="...">t--a--r0</a>'``
    """
    start = base or Path.cwd()
    return " ".join(
        f'<a href="{html.escape(Path(os.path.relpath(p, start)).as_posix())}">{html.escape(Path(p).stem)}</a>'
        for p in paths
    )
