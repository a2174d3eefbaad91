from coder_eval.analysis import flips
from tests.analysis.builders import episodes_frame


def test_flips_list_tasks_whose_pass_rate_changed_from_a_to_b() -> None:
    df = episodes_frame(
        {
            "old": {"t1": ["pass"], "t2": ["fail"], "t3": ["pass"], "t4": ["pass"]},
            "new": {"t1": ["fail"], "t2": ["pass"], "t3": ["pass"], "t4": ["invalid"]},
        }
    )
    out = flips(df, "old", "new").set_index("task_id")
    assert sorted(out.index) == ["t1", "t2"]
    assert out.loc["t1", "direction"] == "pass→fail" and out.loc["t2", "direction"] == "fail→pass"
    assert out.loc["t1", "paths_a"] == ["t1-old-0.jsonl"]
