import pandas as pd
import pytest

from coder_eval.analysis import frequent_calls, frequent_errors, load_runs, tool_usage
from coder_eval.errors import AnalysisError
from tests.analysis.builders import write_episode


def calls() -> pd.DataFrame:
    rows = [
        ("a", "Bash", "ls", False),
        ("a", "Bash", "pytest", True),
        ("b", "Bash", "pytest", True),
        ("b", "Bash", "ls", False),
        ("b", "Read", "x.py", pd.NA),
    ]
    frame = pd.DataFrame(rows, columns=["variant_id", "name", "input_summary", "is_error"])
    return frame.astype({"is_error": "boolean"})


def test_tool_usage_counts_calls_per_variant_and_errors() -> None:
    table = tool_usage(calls())
    assert list(table.index) == ["Bash", "Read"]
    assert table.loc["Bash", ["a", "b", "total", "errors"]].tolist() == [2, 2, 4, 2]
    assert table.loc["Bash", "error_rate"] == 0.5
    assert table.loc["Read", "errors"] == 0  # no result recorded is not an error


def test_frequent_calls_and_errors() -> None:
    assert frequent_calls(calls(), "Bash")["calls"].to_dict() == {"ls": 2, "pytest": 2}
    assert frequent_errors(calls())["errors"].to_dict() == {("Bash", "pytest"): 2}


def test_runs_without_tool_calls_give_empty_tables(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_episode(tmp_path, "t1", "v")
    empty = load_runs(tmp_path / "run1").tool_calls.iloc[0:0]
    assert tool_usage(empty).empty and frequent_calls(empty).empty and frequent_errors(empty).empty
    assert {"total", "errors", "error_rate"} <= set(tool_usage(empty).columns)


def test_missing_column_is_an_analysis_error() -> None:
    with pytest.raises(AnalysisError, match="input_summary"):
        tool_usage(calls().drop(columns="input_summary"))
