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


def test_the_report_notebooks_import_analysis_code_from_its_surface_alone() -> None:
    """A notebook names ``coder_eval.analysis`` only (never a layer's module, which may move), and
    each name it takes from there is there; ``plots`` is the one module among them, the rest are
    the functions and records the cells call."""
    import ast
    import inspect

    from tests.helpers import REPO

    for notebook in sorted((REPO / "notebooks").glob("*.py")):
        tree = ast.parse(notebook.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("coder_eval.analysis"):
                assert node.module == "coder_eval.analysis", f"{notebook.name}:{node.lineno}"
                for alias in node.names:
                    value = getattr(analysis, alias.name)
                    assert inspect.ismodule(value) == (alias.name == "plots"), (notebook.name, alias.name)
