"""Report rendering: each template executed by papermill on the fixture runs, and every check that
must fail before a kernel starts."""

from __future__ import annotations

import ast
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pandas as pd
import pytest
from papermill.translators import PythonTranslator

import coder_eval.analysis as ca
from coder_eval.analysis.answer.engine import REPORT_METRICS
from coder_eval.analysis.views.notebook import jsonable
from coder_eval.errors import ReportError
from coder_eval.run import render as report
from coder_eval.run.render import TEMPLATES, ReportResult, parse_params, render_report
from tests.helpers import REPO

RUNS = REPO / "tests" / "fixtures" / "runs"
SKILL_AB, THREE_WAY = RUNS / "skill-ab", RUNS / "three-way"
NOTEBOOKS = sorted(p for p in (REPO / "notebooks").glob("*.py") if p.name != "__init__.py")
PARAM_LINE = re.compile(
    r"^(?P<name>[a-z_][a-z0-9_]*): (?P<type>str|int|float|bool) = (?P<value>.+?)  # \S.*$"
)
Render = Callable[..., ReportResult]

pytestmark = pytest.mark.filterwarnings("ignore:1 trajectories are incomplete")


def same(value: Any) -> Any:
    """What a value looks like after write_summary's JSON round trip."""
    return json.loads(json.dumps(jsonable(value)))


def summary_of(result: ReportResult) -> dict[str, Any]:
    assert result.ok, result.error
    data: dict[str, Any] = json.loads(result.summary_path.read_text(encoding="utf-8"))
    return data


def html_of(result: ReportResult) -> str:
    return result.html_path.read_text(encoding="utf-8")


def assert_complete_html(page: str, sections: list[str]) -> None:
    headings = re.findall(r"<h2[^>]*>(.*?)<a class=\"anchor-link\"", page)
    assert headings == sections
    assert "data:image/png;base64," in page
    code_cells = re.findall(r'<div class="jp-Cell jp-CodeCell[^"]*"', page)
    assert code_cells and all("jp-mod-noInput" in cell for cell in code_cells)
    assert "load_report_runs(" not in page


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reports")


@pytest.fixture(scope="module")
def run_report(out: Path) -> ReportResult:
    return render_report([SKILL_AB], "run_report", {"top_n": "3"}, out_dir=out / "skill-ab")


@pytest.fixture(scope="module")
def compare_report(out: Path) -> ReportResult:
    return render_report([SKILL_AB, THREE_WAY], "compare_report", out_dir=out / "both")


@pytest.fixture(scope="module")
def classification_report(out: Path) -> ReportResult:
    return render_report(
        [SKILL_AB], "classification_report", {"criterion": "skill_triggered"}, out_dir=out / "skill-ab"
    )


@pytest.mark.slow
def test_run_report_numbers_are_the_analysis_library_numbers(run_report: ReportResult) -> None:
    summary = summary_of(run_report)
    runs = ca.load_runs(SKILL_AB)
    episodes = runs.episodes
    per_variant = pd.concat(
        [ca.summarize(episodes, m).assign(metric=m) for m in REPORT_METRICS], ignore_index=True
    )
    assert summary["per_variant"] == same(per_variant)
    assert summary["pass_at_k"] == same(ca.pass_at_k_table(episodes, ks=[1, 2, 3]))
    assert summary["cost_per_resolved"] == same(ca.cost_per_resolved(episodes))
    assert summary["judge_agreement"] == same(ca.judge_agreement(runs.criteria))
    assert summary["evaluation_cost"] == same(ca.evaluation_cost(runs.criteria))
    assert summary["outcomes"] == {"fail": 11, "invalid": 3, "pass": 22}
    assert summary["suites"] == {by: same(ca.suite_rollups(episodes, by=by)) for by in ("folder", "tag")}
    (whole,) = {r["suite"] for r in summary["suites"]["folder"]}  # the fixture records no task file
    passed = {r["variant_id"]: r for r in summary["per_variant"] if r["metric"] == "passed"}
    for row in summary["suites"]["folder"]:  # one suite of every task: the per-variant figures
        assert (whole, row["n_invalid"]) == ("(unknown)", passed[row["variant_id"]]["n_invalid_excluded"])
        rate = passed[row["variant_id"]]
        assert (row["pass_rate"], row["pass_rate_low"], row["pass_rate_high"], row["pass_rate_method"]) == (
            rate["mean"],
            rate["ci_low"],
            rate["ci_high"],
            rate["method"],
        )
    tags = {(r["suite"], r["variant_id"]): r["n_episodes"] for r in summary["suites"]["tag"]}
    assert sum(n for (tag, _), n in tags.items() if tag == "office") == int(
        episodes.tags.map(lambda t: "office" in t).sum()
    )
    assert [row["episode_id"] for row in summary["invalid"]] == [
        "fix-off-by-one--baseline--r1",
        "memo-docx--with_skill--r2",
        "merge-sheets--baseline--r2",
    ]


@pytest.mark.slow
def test_run_report_html_has_every_section_figures_and_no_code(run_report: ReportResult) -> None:
    page = html_of(run_report)
    sections = [
        "What ran",
        "Outcomes",
        "Per variant",
        "pass@k and pass^k",
        "Per task",
        "Per suite",
        "Criteria",
        "Tool usage",
        "Cost per resolved task",
        "Tokens and cost",
        "Slowest and most expensive episodes",
        "Judges",
    ]
    assert_complete_html(page, sections)
    assert "provider returned 529 overloaded" in page
    assert "scripted model server" in page


@pytest.mark.slow
def test_summary_json_indexes_every_template_rendered_into_the_folder(
    run_report: ReportResult, classification_report: ReportResult
) -> None:
    index = json.loads((run_report.html_path.parent / "summary.json").read_text(encoding="utf-8"))
    assert set(index["reports"]) == {"run_report", "classification_report"}
    entry = index["reports"]["run_report"]
    assert (entry["ok"], entry["html"], entry["runs"]) == (True, "run_report.html", [str(SKILL_AB)])
    assert entry["headline"] == summary_of(run_report)


@pytest.mark.slow
def test_compare_report_numbers_are_the_analysis_library_numbers(compare_report: ReportResult) -> None:
    summary = summary_of(compare_report)
    v = ca.verdicts(ca.load_runs([SKILL_AB, THREE_WAY]))
    episodes = v.selection.episodes
    assert (summary["baseline"], summary["candidate"]) == ("baseline", "with_skill")
    assert summary["comparisons"] == same(v.frame()) and summary["verdict"] == same(v.headline())
    assert [row["metric"] for row in summary["comparisons"]] == list(REPORT_METRICS)
    assert all(
        {"verdict_ci_low", "verdict_ci_high", "verdict_method"} <= set(r) for r in summary["comparisons"]
    )
    assert summary["all_pairs"] == same(ca.compare_all(episodes, "passed"))
    flips = ca.flips(episodes, "baseline", "with_skill").drop(columns=["paths_a", "paths_b"])
    assert summary["flips"] == same(flips)
    assert summary["mde"] == ca.mde(episodes, "with_skill", "baseline", "passed")
    assert summary["power_observed"] == ca.power_at(episodes, "with_skill", "baseline", v.of("passed").diff)
    assert summary["scripted"] is True and summary["headline_tasks"] == sorted(set(episodes.task_id))


@pytest.mark.slow
def test_compare_report_html_links_flipped_trajectories_relatively(compare_report: ReportResult) -> None:
    page = html_of(compare_report)
    sections = [
        "What is compared",
        "Every metric",
        "Tasks that flipped",
        "All pairs",
        "How many tasks a conclusive answer needs",
    ]
    assert_complete_html(page, sections)
    assert "This run used the scripted model" in page and "Every number below covers the headline" in page
    links = re.findall(r'<a href="([^"#]+\.jsonl)">', page)
    assert links and not any(link.startswith("/") for link in links)
    assert all((compare_report.html_path.parent / link).resolve().is_file() for link in links)


@pytest.mark.slow
def test_classification_report_numbers_are_the_analysis_library_numbers(
    classification_report: ReportResult,
) -> None:
    summary = summary_of(classification_report)
    result = ca.classification(ca.load_runs(SKILL_AB).criteria, "skill_triggered")
    assert summary["accuracy"] == result.accuracy
    assert (summary["accuracy_low"], summary["accuracy_high"]) == (result.accuracy_low, result.accuracy_high)
    assert summary["per_label"] == same(result.per_label)
    assert summary["n_misclassified"] == len(result.misclassified)
    page = html_of(classification_report)
    assert_complete_html(
        page,
        [
            "What is classified",
            "Each arm",
            "All arms pooled",
            "Misclassified items",
        ],
    )
    assert "Turn notes.md into memo.docx" in page  # a misclassified item's prompt


@pytest.mark.slow
def test_a_failing_notebook_still_writes_html_with_the_error(out: Path) -> None:
    result = render_report([SKILL_AB], "compare_report", {"baseline": "nope"}, out_dir=out / "failing")
    assert not result.ok
    assert result.error is not None and "AnalysisError" in result.error and "'nope'" in result.error
    page = html_of(result)
    assert "An Exception was encountered" in page and "unknown variant" in page
    assert not result.summary_path.exists()
    index = json.loads((out / "failing" / "summary.json").read_text(encoding="utf-8"))
    assert index["reports"]["compare_report"]["ok"] is False


@pytest.mark.slow
def test_a_cell_timeout_fails_the_report_with_a_banner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = tmp_path / "sleeps.py"
    notebook.write_text(
        '# %% tags=["parameters"]\nrun_dir: str = ""  # run\nsummary_path: str = ""  # summary\n\n'
        "# %%\nimport time\n\ntime.sleep(30)\n",
        encoding="utf-8",
    )
    sleeps = report.Template(str(notebook), "sleeps", runs_param="run_dir", many_runs=False, params={})
    monkeypatch.setitem(TEMPLATES, "sleeps", sleeps)
    result = render_report([SKILL_AB], "sleeps", out_dir=tmp_path / "out", timeout=1)
    assert not result.ok and result.error is not None and "timeout" in result.error
    assert "Report failed" in html_of(result)


@pytest.fixture
def no_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kernel was started")

    monkeypatch.setattr(report, "execute", refuse)


@pytest.mark.usefixtures("no_kernel")
@pytest.mark.parametrize(
    ("template", "params", "message"),
    [
        ("run_reprot", {}, "unknown report template 'run_reprot' (did you mean 'run_report'?)"),
        ("compare_report", {"baselne": "a"}, "(did you mean 'baseline'?)"),
        ("run_report", {"top_n": "many"}, "parameter 'top_n' must be int (got 'many')"),
        ("run_report", {"run_dir": "x"}, "set by the report command itself"),
    ],
)
def test_bad_template_or_parameter_fails_before_any_kernel(
    template: str, params: dict[str, str], message: str
) -> None:
    start = time.monotonic()
    with pytest.raises(ReportError) as caught:
        render_report([SKILL_AB], template, params, out_dir=Path("/nonexistent/never-written"))
    assert message in str(caught.value)
    assert time.monotonic() - start < 0.5


@pytest.mark.usefixtures("no_kernel")
def test_run_dir_without_trajectories_fails_before_any_kernel(tmp_path: Path) -> None:
    (tmp_path / "empty" / "episodes").mkdir(parents=True)
    (tmp_path / "empty" / "run.json").write_text('{"run_id": "empty"}', encoding="utf-8")
    with pytest.raises(ReportError, match="no trajectories"):
        render_report([tmp_path / "empty"])
    with pytest.raises(ReportError, match="not a run directory"):
        render_report([tmp_path])
    with pytest.raises(ReportError, match="reports on one run"):
        render_report([SKILL_AB, THREE_WAY], "run_report")


def test_parse_params_reads_name_value_pairs() -> None:
    assert parse_params(["baseline=old", "metric=cost_usd", "x=a=b", "empty="]) == {
        "baseline": "old",
        "metric": "cost_usd",
        "x": "a=b",
        "empty": "",
    }


@pytest.mark.parametrize(
    ("pairs", "message"),
    [(["baseline"], "not name=value"), (["1x=a"], "not name=value"), (["a=1", "a=2"], "given twice")],
)
def test_parse_params_rejects_malformed_pairs(pairs: list[str], message: str) -> None:
    with pytest.raises(ReportError, match=message):
        parse_params(pairs)


def parameters_cell(path: Path) -> Any:
    cells = [c for c in jupytext.read(path).cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{path.name}: needs exactly one cell tagged parameters"
    return cells[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_a_percent_file_with_a_simple_parameters_cell(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "format_name: percent" in text and "# %%" in text
    nb = jupytext.read(path)
    assert all(
        not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code"
    )
    cell = parameters_cell(path)
    lines = [line for line in cell.source.splitlines() if line.strip()]
    for line in lines:
        match = PARAM_LINE.match(line)
        assert match, f"{path.name}: {line!r} is not `name: type = literal  # help`"
        value = ast.literal_eval(match["value"])
        assert type(value).__name__ == match["type"], line
    inspected = PythonTranslator.inspect(nbformat.v4.new_code_cell(cell.source))
    assert [p.name for p in inspected] == [PARAM_LINE.match(line)["name"] for line in lines]  # type: ignore[index]


def test_no_executed_notebook_is_kept_beside_the_templates() -> None:
    assert not list((REPO / "notebooks").glob("*.ipynb")), (
        "templates are py:percent files; never commit outputs"
    )


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_templates_declare_the_parameters_their_notebook_has(name: str) -> None:
    spec = TEMPLATES[name]
    cell = parameters_cell(REPO / "notebooks" / spec.notebook)
    declared = {
        p.name: p.inferred_type_name for p in PythonTranslator.inspect(nbformat.v4.new_code_cell(cell.source))
    }
    expected = {spec.runs_param: "str", "summary_path": "str"} | {
        k: t.__name__ for k, t in spec.params.items()
    }
    assert declared == expected


def visible_text(page: str) -> str:
    """The HTML without styles, scripts and data URIs (what a reader sees, give or take tags)."""
    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.DOTALL)
    return re.sub(r'data:[^"\')\s]+', "", page)


@pytest.mark.slow
def test_reports_load_nothing_remote(
    run_report: ReportResult, compare_report: ReportResult, classification_report: ReportResult
) -> None:
    for result in (run_report, compare_report, classification_report):
        page = html_of(result)
        loaded = re.findall(r"<(?:script|link|img|iframe)\b[^>]*(?:src|href)=\"([^\"]+)\"", page)
        assert not [url for url in loaded if not url.startswith("data:")], result.html_path.name
        assert not re.search(r"https?://[^\"' ]*(cdnjs|jsdelivr|unpkg|mathjax|require)", page, re.I)


@pytest.mark.slow
def test_every_report_says_at_the_top_that_the_model_was_scripted(
    run_report: ReportResult, compare_report: ReportResult, classification_report: ReportResult
) -> None:
    for result in (run_report, compare_report, classification_report):
        page = html_of(result)
        banner, first_section = page.find("This run used the scripted model"), page.find("<h2")
        assert 0 < banner < first_section, result.html_path.name


@pytest.mark.slow
def test_reports_print_na_with_a_reason_never_a_bare_nan(
    run_report: ReportResult, classification_report: ReportResult, out: Path
) -> None:
    three_way = render_report([THREE_WAY], "run_report", out_dir=out / "three-way")
    for result in (run_report, classification_report, three_way):
        text = visible_text(html_of(result))
        assert not re.findall(r">\s*(?:NaN|nan|inf|-inf|None|&lt;NA&gt;)\s*<", text), result.html_path.name
    assert "n/a (label never observed)" in visible_text(html_of(classification_report))
    assert "∞" in visible_text(html_of(three_way))  # an unbounded cost-per-resolved interval


@pytest.mark.slow
def test_the_slowest_and_most_expensive_tables_are_captioned(run_report: ReportResult) -> None:
    text = visible_text(html_of(run_report))
    assert "The 3 slowest episodes" in text and "The 3 most expensive episodes" in text


@pytest.mark.slow
def test_a_failed_rerender_never_replaces_a_good_report(out: Path) -> None:
    folder = out / "rerender"
    good = render_report([SKILL_AB], "compare_report", out_dir=folder)
    assert good.ok, good.error
    kept = {p.name: p.read_bytes() for p in folder.iterdir()}

    failed = render_report([SKILL_AB], "compare_report", {"baseline": "nope"}, out_dir=folder)
    assert not failed.ok and failed.html_path.name == "compare_report.failed.html"
    assert "unknown variant" in html_of(failed)
    now = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert {name: now[name] for name in kept} == kept  # the report, its headline and summary.json
    assert set(now) - set(kept) == {"compare_report.failed.html", "compare_report.failed.ipynb"}

    again = render_report([SKILL_AB], "compare_report", out_dir=folder)
    assert again.ok and not (folder / "compare_report.failed.html").exists()
    assert not list(folder.glob(".*"))  # no temporary file left behind
