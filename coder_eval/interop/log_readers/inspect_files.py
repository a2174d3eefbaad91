"""Which files are Inspect AI eval logs: cheap to import (no inspect_ai, no pandas), so the report
command can check its inputs before any kernel starts.

Example::

    is_inspect_log(Path("logs/2026-11-30T12-00-00_arith_abc.eval"))   # True
    inspect_logs_in(Path("logs"))                                     # every log Inspect lists there
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from coder_eval.errors import AnalysisError
from coder_eval.version import pip_install

LOG_SUFFIXES = frozenset({".eval", ".json"})
"""Inspect's two log formats; coder_eval's own trajectories are ``.jsonl``."""
INSTALL_HINT = pip_install("inspect")


def is_inspect_log(path: Path) -> bool:
    """Whether ``load_runs`` reads ``path`` as an Inspect log: ``is_inspect_log(Path("a.eval"))`` -> True."""
    return path.suffix in LOG_SUFFIXES


def inspect_logs_in(folder: Path) -> list[Path]:
    """The Inspect logs under ``folder``, as Inspect lists them (its listing files are not logs);
    ``[]`` when it holds no ``.eval`` or ``.json`` file."""
    if not any(is_inspect_log(p) for p in folder.rglob("*")):
        return []
    try:
        from inspect_ai.log import list_eval_logs
    except ImportError as exc:
        raise AnalysisError(f"{folder}: reading Inspect AI logs needs inspect_ai: {INSTALL_HINT}") from exc
    return sorted(Path(unquote(urlparse(info.name).path)) for info in list_eval_logs(str(folder)))
