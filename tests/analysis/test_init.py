import coder_eval.analysis as analysis

EXPORTED = [
    "Classification",
    "Comparison",
    "Declaration",
    "Estimate",
    "Interval",
    "Runs",
    "TaskSelection",
    "Verdicts",
    "classification",
    "compare",
    "compare_all",
    "compare_metrics",
    "comparisons_frame",
    "cost_per_resolved",
    "evaluation_cost",
    "flips",
    "frequent_calls",
    "frequent_errors",
    "headline",
    "headline_tasks",
    "higher_is_better",
    "invalid_counts",
    "judge_agreement",
    "judge_votes",
    "load_runs",
    "mde",
    "pass_at_k",
    "pass_at_k_table",
    "pass_hat_k",
    "power_at",
    "required_tasks",
    "suite_rollups",
    "summarize",
    "tool_usage",
    "variance_parts",
    "verdicts",
    "wilson_interval",
]


def test_public_api_is_exactly_the_documented_names() -> None:
    assert sorted(analysis.__all__) == EXPORTED


def test_every_public_name_exists_and_has_an_example() -> None:
    for name in analysis.__all__:
        doc = getattr(analysis, name).__doc__ or ""
        assert "Example" in doc or "example" in doc, name
