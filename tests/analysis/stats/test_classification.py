import pandas as pd
import pytest
from scipy import stats

from coder_eval.analysis import classification
from coder_eval.errors import AnalysisError

PAIRS = [("a", "a"), ("a", "a"), ("a", "b"), ("b", "b"), (None, "b"), ("b", None), ("a", "a"), ("b", "b")]


def criteria(pairs: list[tuple[str | None, str | None]], criterion: str = "skill") -> pd.DataFrame:
    """(observed, expected) per item, one item per task."""
    return pd.DataFrame(
        [
            {
                "criterion_id": criterion,
                "task_id": f"t{i}",
                "variant_id": "v",
                "outcome": "pass",
                "observed_label": o,
                "expected_label": e,
            }
            for i, (o, e) in enumerate(pairs)
        ]
    )


def test_confusion_matrix_has_expected_rows_observed_columns_and_none() -> None:
    cls = classification(criteria(PAIRS), n_resamples=499)
    assert list(cls.confusion.index) == ["a", "b", "none"] == list(cls.confusion.columns)
    assert cls.confusion.loc["a", "a"] == 3 and cls.confusion.loc["b", "a"] == 1
    assert cls.confusion.loc["b", "none"] == 1 and cls.confusion.loc["none", "b"] == 1
    assert cls.n == 8 and cls.accuracy == pytest.approx(5 / 8) and len(cls.misclassified) == 3


def test_precision_and_recall_get_wilson_intervals() -> None:
    per = classification(criteria(PAIRS), n_resamples=499).per_label.set_index("label")
    precision = stats.binomtest(3, 4).proportion_ci(method="wilson")
    assert per.loc["a", "precision"] == pytest.approx(3 / 4)
    assert (per.loc["a", "precision_low"], per.loc["a", "precision_high"]) == pytest.approx(
        (precision.low, precision.high)
    )
    assert per.loc["a", "recall"] == 1.0 and per.loc["a", "f1"] == pytest.approx(6 / 7)
    assert per.loc["a", "f1_low"] <= per.loc["a", "f1"] <= per.loc["a", "f1_high"]


def test_several_labelled_criteria_need_a_choice() -> None:
    both = pd.concat([criteria(PAIRS, "skill"), criteria(PAIRS, "tool")])
    with pytest.raises(AnalysisError, match="skill, tool"):
        classification(both)
    assert classification(both, criterion="tool", n_resamples=199).criterion_id == "tool"
    with pytest.raises(AnalysisError, match="did you mean 'tool'"):
        classification(both, criterion="tol")


def test_accuracy_is_wilson_with_one_item_per_task() -> None:
    cls = classification(criteria(PAIRS), n_resamples=499)
    wilson = stats.binomtest(5, 8).proportion_ci(method="wilson")
    assert cls.accuracy_method == "Wilson"
    assert (cls.accuracy_low, cls.accuracy_high) == pytest.approx((wilson.low, wilson.high))


def test_accuracy_with_repeats_resamples_whole_tasks() -> None:
    """Three repeats per task are not three independent items: the interval is a cluster bootstrap."""
    repeated = pd.concat([criteria(PAIRS)] * 3, ignore_index=True)
    cls = classification(repeated, n_resamples=999)
    assert cls.accuracy == pytest.approx(5 / 8) and cls.n == 24
    assert cls.accuracy_method.startswith("cluster bootstrap")
    naive = stats.binomtest(15, 24).proportion_ci(method="wilson")
    assert cls.accuracy_high - cls.accuracy_low > naive.high - naive.low  # honest: wider than 24 iid items


def test_pooled_variants_are_not_counted_as_independent_items() -> None:
    """Two variants on the same tasks: 20 items but only 10 tasks, so the accuracy is task-clustered."""
    pooled = pd.concat([criteria(PAIRS).assign(variant_id=v) for v in ("a", "b")], ignore_index=True)
    cls = classification(pooled, n_resamples=999)
    assert cls.n == 16 and cls.accuracy_method.startswith("cluster bootstrap")


def test_a_classifier_that_never_engages_still_gets_intervals_with_width() -> None:
    """Three items per task, the label expected on some and never observed: recall 0 in every resample."""
    pairs = [("none", "skill" if i % 2 else "none") for i in range(8) for _ in range(3)]
    frame = criteria(pairs).assign(task_id=[f"t{i}" for i in range(8) for _ in range(3)])
    per = classification(frame, n_resamples=199).per_label.set_index("label")
    assert per.loc["skill", "recall"] == 0 and per.loc["skill", "recall_high"] > 0.05
    assert per.loc["none", "recall"] == 1 and per.loc["none", "recall_low"] < 0.95
    assert per.loc["skill", "f1_high"] > 0 and "pooled Wilson" in per.loc["skill", "method"]
    assert per.loc["skill", "method"].partition("; ")[0].endswith("for P and R")


def test_weighted_and_micro_f1_from_the_per_label_scores() -> None:
    import pandas as pd

    from coder_eval.analysis import classification

    pairs = [
        ("pdf", "pdf"),
        ("pdf", "pdf"),
        ("none", "pdf"),
        ("pdf", "none"),
        ("none", "none"),
        ("none", "docx"),
    ]
    criteria = pd.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(len(pairs))],
            "criterion_id": "skill",
            "observed_label": [o for o, _ in pairs],
            "expected_label": [e for _, e in pairs],
            "outcome": "pass",
        }
    )
    cls = classification(criteria)
    table = cls.per_label.set_index("label")
    expected = (table["f1"] * table["support"]).sum() / table["support"].sum()
    assert cls.weighted_f1 == pytest.approx(expected)
    assert cls.micro_f1 == pytest.approx(cls.accuracy) == pytest.approx(3 / 6)
