"""Gates: --min-pass-rate and suite_thresholds, with the analysis library's numbers; point estimates."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from coder_eval.analysis import classification, load_runs, summarize
from coder_eval.experiment import Suite
from coder_eval.run.gates import GateResult, evaluate_gates, failed
from tests.analysis.builders import write_episode

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def pass_rate_run(tmp_path: Path) -> Path:
    """Variant ``good`` passes 4 of 4 tasks, ``bad`` 1 of 4; one ``bad`` episode is invalid."""
    for i in range(4):
        write_episode(tmp_path, f"t{i}", "good", outcome="pass")
        write_episode(tmp_path, f"t{i}", "bad", outcome="pass" if i == 0 else "fail")
    write_episode(tmp_path, "t4", "bad", outcome="invalid")
    return tmp_path / "run1"


def labelled_run(tmp_path: Path) -> Path:
    """(observed, expected) labels: pdf recall 2/3, pdf precision 2/3, one docx never observed."""
    labels = [("pdf", "pdf"), ("pdf", "pdf"), (None, "pdf"), ("pdf", None), (None, None), (None, "docx")]
    for i, pair in enumerate(labels):
        write_episode(tmp_path, f"s.{i}", "v", labels=pair, outcome="pass" if pair[0] == pair[1] else "fail")
    return tmp_path / "run1"


def suite(thresholds: dict[str, dict[str, float]], n: int = 6) -> Suite:
    return Suite("s", thresholds, tuple(f"s.{i}" for i in range(n)))  # type: ignore[arg-type]


def test_min_pass_rate_per_variant_matches_summarize(tmp_path: Path) -> None:
    runs = load_runs(pass_rate_run(tmp_path))
    results = evaluate_gates(runs, ["good", "bad"], [], min_pass_rate=0.5)
    good, bad = results
    assert (good.verdict, bad.verdict) == ("pass", "fail")
    table = summarize(runs.episodes).set_index("variant_id")
    assert bad.value == pytest.approx(0.25) == table.loc["bad", "mean"]
    assert (bad.ci_low, bad.ci_high) == (table.loc["bad", "ci_low"], table.loc["bad", "ci_high"])
    assert "1 invalid excluded" in bad.note and "Wilson" in bad.note


def test_gate_compares_the_point_estimate_not_the_bound(tmp_path: Path) -> None:
    runs = load_runs(pass_rate_run(tmp_path))
    (good,) = evaluate_gates(runs, ["good"], [], min_pass_rate=0.9)
    assert good.verdict == "pass" and good.ci_low < 0.9


def test_variant_without_episodes_fails(tmp_path: Path) -> None:
    (missing,) = evaluate_gates(load_runs(pass_rate_run(tmp_path)), ["other"], [], min_pass_rate=0.1)
    assert missing.verdict == "fail" and missing.note == "no episodes"


def test_recall_and_precision_per_positive_label(tmp_path: Path) -> None:
    runs = load_runs(labelled_run(tmp_path))
    results = evaluate_gates(runs, ["v"], [suite({"tests": {"recall": 0.6, "precision": 0.7}})])
    by = {(r.metric, r.label): r for r in results}
    assert set(by) == {("recall", "pdf"), ("recall", "docx"), ("precision", "pdf"), ("precision", "docx")}
    per_label = classification(runs.criteria, "tests").per_label.set_index("label")
    assert by["recall", "pdf"].value == pytest.approx(2 / 3) == per_label.loc["pdf", "recall"]
    assert by["recall", "pdf"].verdict == "pass"
    assert by["precision", "pdf"].verdict == "fail"
    assert by["recall", "docx"].value == 0.0 and by["recall", "docx"].verdict == "fail"
    assert math.isnan(by["precision", "docx"].value) and by["precision", "docx"].verdict == "fail"
    assert "never observed" in by["precision", "docx"].note


def test_accuracy_macro_f1_and_pass_rate_by_kind(tmp_path: Path) -> None:
    runs = load_runs(labelled_run(tmp_path))
    thresholds = {"hidden_tests": {"accuracy": 0.4, "macro_f1": 0.9, "pass_rate": 0.5}}
    accuracy, macro_f1, pass_rate = evaluate_gates(runs, ["v"], [suite(thresholds)])
    cls = classification(runs.criteria, "tests")
    assert accuracy.value == pytest.approx(cls.accuracy) == pytest.approx(2 / 5)  # unlabelled row left out
    assert accuracy.verdict == "pass" and accuracy.ci_low < accuracy.value < accuracy.ci_high
    assert macro_f1.value == pytest.approx(cls.macro_f1) and macro_f1.verdict == "fail"
    assert pass_rate.value == pytest.approx(0.5) and pass_rate.verdict == "pass"


def test_suite_gates_only_count_the_suite_tasks(tmp_path: Path) -> None:
    labelled_run(tmp_path)
    write_episode(tmp_path, "other", "v", labels=(None, "pdf"), outcome="fail")
    (recall,) = evaluate_gates(load_runs(tmp_path / "run1"), ["v"], [suite({"tests": {"recall": 0.5}}, n=3)])
    assert recall.value == pytest.approx(2 / 3)


def test_criterion_without_labels_fails_with_the_reason(tmp_path: Path) -> None:
    runs = load_runs(pass_rate_run(tmp_path))
    results = evaluate_gates(runs, ["good"], [Suite("s", {"tests": {"recall": 0.5}}, ("t0", "t1"))])
    assert results[0].verdict == "fail" and "no criterion carries" in results[0].note


def test_unknown_criterion_fails(tmp_path: Path) -> None:
    runs = load_runs(labelled_run(tmp_path))
    (result,) = evaluate_gates(runs, ["v"], [suite({"judge": {"pass_rate": 0.5}})])
    assert result.verdict == "fail" and result.note == "no results for this criterion"
    assert failed([result]) == [result]


def test_json_form_has_no_nan() -> None:
    row = GateResult("g", "v", "macro_f1", 0.5).as_json()
    assert row["value"] is None and row["threshold"] == 0.5 and row["verdict"] == "fail"


def test_ungated_variant_is_measured_but_never_fails(tmp_path: Path) -> None:
    runs = load_runs(pass_rate_run(tmp_path))
    good, bad = evaluate_gates(runs, ["good", "bad"], [], min_pass_rate=0.5, ungated=["bad"])
    assert (good.verdict, bad.verdict) == ("pass", "not gated")
    assert bad.value == pytest.approx(0.25)
    assert failed([good, bad]) == []


def test_label_metrics_for_one_label(tmp_path: Path) -> None:
    runs = load_runs(labelled_run(tmp_path))
    thresholds = {"tests": {"recall.pdf": 0.6, "precision.pdf": 0.7, "recall.docx": 0.1, "recall.xlsx": 0.1}}
    pdf_recall, pdf_precision, docx_recall, xlsx_recall = evaluate_gates(runs, ["v"], [suite(thresholds)])
    assert (pdf_recall.metric, pdf_recall.label, pdf_recall.verdict) == ("recall", "pdf", "pass")
    assert pdf_recall.value == pytest.approx(2 / 3)
    assert (pdf_precision.label, pdf_precision.verdict) == ("pdf", "fail")
    assert docx_recall.value == 0.0 and docx_recall.verdict == "fail"
    assert xlsx_recall.verdict == "fail" and "no row expects the label 'xlsx'" in xlsx_recall.note


def test_weighted_and_micro_f1_and_the_mean_score(tmp_path: Path) -> None:
    runs = load_runs(labelled_run(tmp_path))
    thresholds = {"tests": {"weighted_f1": 0.1, "micro_f1": 0.5, "mean": 0.5}}
    weighted, micro, mean = evaluate_gates(runs, ["v"], [suite(thresholds)])
    cls = classification(runs.criteria, "tests")
    support = cls.per_label.set_index("label")["support"]
    f1 = cls.per_label.set_index("label")["f1"]
    assert weighted.value == pytest.approx((f1 * support).sum() / support.sum())
    assert micro.value == pytest.approx(cls.accuracy) and micro.verdict == "fail"
    assert mean.value == pytest.approx(summarize(runs.criteria, metric="score").iloc[0]["mean"])
    assert mean.value == pytest.approx(0.5) and mean.verdict == "pass"


def test_completion_rate_counts_episodes_where_the_criterion_was_not_graded(tmp_path: Path) -> None:
    for i in range(3):
        write_episode(tmp_path, f"s.{i}", "v", outcome="pass")
    write_episode(tmp_path, "s.3", "v", outcome="invalid")
    runs = load_runs(tmp_path / "run1")
    (rate,) = evaluate_gates(runs, ["v"], [suite({"tests": {"completion_rate": 0.8}}, n=4)])
    assert rate.value == pytest.approx(0.75) and rate.verdict == "fail"
    assert "invalid episodes count as not completed" in rate.note
