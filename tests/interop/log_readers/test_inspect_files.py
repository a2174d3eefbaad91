"""Which paths are Inspect AI logs, and what happens to those that are not (no eval needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.analysis import load_runs
from coder_eval.errors import AnalysisError, ReportError
from coder_eval.interop.log_readers.inspect_files import inspect_logs_in, is_inspect_log
from coder_eval.run.render import TEMPLATES, check_runs, render_report, run_id


@pytest.mark.parametrize(("name", "expected"), [("a.eval", True), ("a.json", True), ("a.jsonl", False)])
def test_eval_and_json_files_are_inspect_logs_and_jsonl_trajectories(name: str, expected: bool) -> None:
    assert is_inspect_log(Path(name)) is expected


def test_a_folder_without_logs_has_none_and_load_runs_says_what_it_looked_for(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert inspect_logs_in(tmp_path) == []
    with pytest.raises(AnalysisError, match=r"no \*\.jsonl trajectories nor Inspect AI logs"):
        load_runs(tmp_path)


def test_a_file_that_is_not_a_log_is_refused_with_its_path(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed: pip install -e '.[inspect]'")
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"not a zip file")
    with pytest.raises(AnalysisError, match=r"broken\.eval: not a readable Inspect AI eval log"):
        load_runs(broken)


def test_the_report_takes_a_log_file_and_names_its_folder_after_it(tmp_path: Path) -> None:
    log = tmp_path / "2026-11-30T12-00-00_arith_abc.eval"
    log.write_bytes(b"")
    assert check_runs([log], "compare_report", TEMPLATES["compare_report"]) == [log.resolve()]
    assert run_id(log) == "2026-11-30T12-00-00_arith_abc"


def test_the_report_refuses_a_file_that_is_no_log_before_any_kernel(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(ReportError, match="not a run directory"):
        render_report([tmp_path / "notes.txt"], "compare_report")
