"""Reports rendered in one shared kernel: one kernel process for all of them, and each notebook as
clean as in a kernel of its own (no names, warning filters, options, figures, matplotlib settings or
folder left by the one before; cells numbered from 1; the demo's reports the same notebooks); a
kernel a timeout left busy is replaced."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest

from coder_eval.run import render as report
from coder_eval.run.render import TEMPLATES, render_report
from coder_eval.run.report_kernel import RESET_TAG, ReportKernel
from coder_eval.run.reports import render_run_reports, report_jobs
from coder_eval.run_dir import read_manifest
from tests.helpers import REPO

SKILL_AB = REPO / "tests" / "fixtures" / "runs" / "skill-ab"
HEADER = '# %% tags=["parameters"]\nrun_dir: str = ""  # run\nsummary_path: str = ""  # summary\n\n'
LEAVES = HEADER + (
    "# %%\nimport json, os, warnings\nimport matplotlib.pyplot as plt\nimport pandas as pd\n\n"
    "leaked = 1\n"
    'warnings.simplefilter("error")\n'
    'pd.set_option("display.max_rows", 3)\n'
    'plt.rcParams["lines.linewidth"] = 9.0\n'
    "plt.figure()\n"
    'os.makedirs("elsewhere", exist_ok=True)\n'
    'os.chdir("elsewhere")\n'
    'json.dump({"pid": os.getpid()}, open(os.path.join("..", summary_path), "w"))\n'
)
"""A report that leaves a name, a warning filter, a pandas option, a matplotlib setting, an open
figure and another working folder behind."""
CHECKS = HEADER + (
    "# %%\nimport json, os, time, warnings\nimport matplotlib.pyplot as plt\nimport pandas as pd\n\n"
    "found = {\n"
    '    "warnings_are_errors": any(f[0] == "error" and f[2] is Warning for f in warnings.filters),\n'
    '    "pid": os.getpid(),\n'
    '    "leaked": "leaked" in globals(),\n'
    '    "max_rows": pd.get_option("display.max_rows"),\n'
    '    "linewidth": plt.rcParams["lines.linewidth"],\n'
    '    "figures": len(plt.get_fignums()),\n'
    '    "cwd": os.getcwd(),\n'
    "}\n"
    'json.dump(found, open(summary_path, "w"))\n'
)
SLEEPS = HEADER + "# %%\nimport time\n\ntime.sleep(30)\n"


def template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> str:
    notebook = tmp_path / f"{name}.py"
    notebook.write_text(source, encoding="utf-8")
    spec = report.Template(str(notebook), name, runs_param="run_dir", many_runs=False, params={})
    monkeypatch.setitem(TEMPLATES, name, spec)
    return name


def summary(result: report.ReportResult) -> dict[str, Any]:
    assert result.ok, result.error
    found: dict[str, Any] = json.loads(result.summary_path.read_text(encoding="utf-8"))
    return found


@pytest.mark.slow
def test_reports_share_one_kernel_and_none_sees_what_the_last_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaves = template(tmp_path, monkeypatch, "leaves", LEAVES)
    checks = template(tmp_path, monkeypatch, "checks", CHECKS)
    with ReportKernel() as kernel:
        first = render_report([SKILL_AB], leaves, out_dir=tmp_path / "a", kernel=kernel)
        second = render_report([SKILL_AB], checks, out_dir=tmp_path / "b", kernel=kernel)
    found = summary(second)
    assert found["pid"] == summary(first)["pid"]  # the same kernel process
    assert found["leaked"] is False
    assert found["max_rows"] == 60  # pandas' default
    assert found["linewidth"] == 1.5  # matplotlib's default
    assert found["figures"] == 0
    assert found["warnings_are_errors"] is False
    assert Path(found["cwd"]) == (tmp_path / "b").resolve()
    nb = nbformat.read(second.notebook_path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [c for c in nb.cells if RESET_TAG in c.metadata.get("tags", [])]
    assert [c.execution_count for c in code][:2] == [1, 2]


@pytest.mark.slow
def test_a_report_that_timed_out_leaves_the_next_a_new_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps = template(tmp_path, monkeypatch, "sleeps", SLEEPS)
    checks = template(tmp_path, monkeypatch, "checks", CHECKS)
    with ReportKernel() as kernel:
        before = render_report([SKILL_AB], checks, out_dir=tmp_path / "a", kernel=kernel)
        timed_out = render_report([SKILL_AB], sleeps, out_dir=tmp_path / "b", kernel=kernel, timeout=1)
        after = render_report([SKILL_AB], checks, out_dir=tmp_path / "c", kernel=kernel)
    assert not timed_out.ok and timed_out.error is not None and "timeout" in timed_out.error
    assert summary(after)["pid"] != summary(before)["pid"]


def cells(notebook: Path, folder: Path) -> list[tuple[str, str, Any, str]]:
    """Each cell's type, source, number and outputs (the report's folder written as ``OUT``; a
    figure's pixels left out: the run report draws one with unseeded jitter)."""
    found = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        outputs = cell.get("outputs", [])
        for output in outputs:
            if "image/png" in output.get("data", {}):
                output["data"]["image/png"] = "<png>"
        text = json.dumps(outputs, sort_keys=True).replace(str(folder.resolve()), "OUT")
        found.append((cell.cell_type, cell.source, cell.get("execution_count"), text))
    return found


@pytest.mark.slow
def test_the_demo_reports_in_one_kernel_are_the_notebooks_rendered_one_kernel_each(
    tmp_path: Path,
) -> None:
    variants = read_manifest(SKILL_AB).variants
    shared = render_run_reports(SKILL_AB, variants, out_dir=tmp_path / "shared")
    jobs = report_jobs(SKILL_AB, variants, tmp_path / "each")
    each = [render_report([SKILL_AB], job.template, job.params, job.out_dir) for job in jobs]
    assert [o.template for o in shared] == [j.template for j in jobs]
    assert len(shared) == 3 and all(o.ok for o in shared) and all(r.ok for r in each)
    for outcome, alone in zip(shared, each, strict=True):
        assert outcome.html_path is not None
        ours = cells(outcome.html_path.with_suffix(".ipynb"), tmp_path / "shared")
        assert ours == cells(alone.notebook_path, tmp_path / "each"), outcome.template


def test_closing_a_kernel_that_never_started_does_nothing() -> None:
    kernel = ReportKernel()
    kernel.close()
    kernel.close()
    assert kernel.manager is None


FAILS = HEADER + '# %%\nraise RuntimeError("no such variant here")\n'


@pytest.mark.slow
def test_a_failing_report_among_three_still_yields_the_other_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = tmp_path / "fails.py"
    failing.write_text(FAILS, encoding="utf-8")
    spec = TEMPLATES["compare_report"]
    monkeypatch.setitem(
        TEMPLATES, "compare_report", report.Template(str(failing), "fails", "run_dir", False, spec.params)
    )
    out = tmp_path / "reports"
    outcomes = render_run_reports(SKILL_AB, read_manifest(SKILL_AB).variants, out_dir=out)
    assert [(o.template, o.ok) for o in outcomes] == [
        ("run_report", True), ("compare_report", False), ("classification_report", True),
    ]  # fmt: skip
    failed = outcomes[1]
    assert failed.error is not None and "RuntimeError: no such variant here" in failed.error
    assert failed.html_path == out / "compare_report.failed.html"
    assert "no such variant here" in failed.html_path.read_text(encoding="utf-8")
    assert (out / "compare_report.failed.ipynb").is_file()
    for ok in (outcomes[0], outcomes[2]):
        assert ok.html_path is not None and ok.html_path.is_file()
        assert ok.html_path.with_suffix(".ipynb").is_file()
    index = json.loads((out / "summary.json").read_text(encoding="utf-8"))["reports"]
    assert {name: entry["ok"] for name, entry in index.items()} == {
        "run_report": True, "compare_report": False, "classification_report": True,
    }  # fmt: skip


LONG_EXPORT = HEADER + (
    "# %%\nimport json\nimport pandas as pd\nfrom IPython.display import display\n\n"
    "for _ in range(300):\n    display(pd.DataFrame(range(200)))\n"
    'json.dump({}, open(summary_path, "w"))\n'
)


def checking_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run and classification reports replaced by ``CHECKS`` (what the kernel looks like)."""
    for name in ("run_report", "classification_report"):
        spec = TEMPLATES[name]
        notebook = tmp_path / f"{name}.py"
        notebook.write_text(CHECKS, encoding="utf-8")
        monkeypatch.setitem(
            TEMPLATES, name, report.Template(str(notebook), name, "run_dir", False, spec.params)
        )


@pytest.mark.slow
def test_reports_rendered_into_a_relative_folder_are_all_written_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checking_templates(tmp_path, monkeypatch)
    # a first report that takes a while to export, and a second that runs (in papermill's working
    # folder, the report folder) while it is exported
    (tmp_path / "run_report.py").write_text(LONG_EXPORT, encoding="utf-8")
    (tmp_path / "classification_report.py").write_text(CHECKS + "time.sleep(3)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    outcomes = render_run_reports(SKILL_AB, ["baseline"], out_dir=Path("pages"))
    assert [(o.template, o.ok, o.html_path) for o in outcomes] == [
        ("run_report", True, Path("pages/run_report.html")),
        ("classification_report", True, Path("pages/classification_report.html")),
    ]
    assert sorted(p.name for p in (tmp_path / "pages").iterdir() if not p.name.startswith(".")) == [
        "classification_report.html", "classification_report.ipynb", "classification_report.summary.json",
        "run_report.html", "run_report.ipynb", "run_report.summary.json", "summary.json",
    ]  # fmt: skip


@pytest.mark.slow
def test_a_kernel_started_beforehand_renders_the_reports_and_is_closed_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checking_templates(tmp_path, monkeypatch)
    kernel = ReportKernel()
    kernel.start(tmp_path)
    assert kernel.warmed()
    pid = kernel.manager.provisioner.pid
    outcomes = render_run_reports(SKILL_AB, ["baseline"], out_dir=tmp_path / "out", kernel=kernel)
    assert [(o.template, o.ok) for o in outcomes] == [("run_report", True), ("classification_report", True)]
    for outcome in outcomes:
        assert outcome.html_path is not None
        found = json.loads(outcome.html_path.with_suffix(".summary.json").read_text(encoding="utf-8"))
        assert found["pid"] == pid and found["leaked"] is False
    assert kernel.manager is None  # closed
    assert not kernel.warmed(timeout=0.1)  # a kernel closed is not warm


def test_a_kernel_never_started_is_not_warm() -> None:
    assert ReportKernel().warmed(timeout=0.1) is False


@pytest.mark.slow
def test_reuse_keeps_reports_rendered_after_the_last_trajectory_and_starts_no_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checking_templates(tmp_path, monkeypatch)
    run = tmp_path / "run"
    shutil.copytree(SKILL_AB, run)
    first = render_run_reports(run, ["baseline"], out_dir=tmp_path / "out")
    pages = {o.template: o.html_path.stat().st_mtime_ns for o in first if o.html_path is not None}
    monkeypatch.setattr(ReportKernel, "start", lambda self, folder: pytest.fail("a kernel started"))
    kept = render_run_reports(run, ["baseline"], out_dir=tmp_path / "out", reuse=True)
    assert [(o.template, o.ok, o.kept) for o in kept] == [
        ("run_report", True, True), ("classification_report", True, True),
    ]  # fmt: skip
    assert {o.template: o.html_path.stat().st_mtime_ns for o in kept if o.html_path} == pages


@pytest.mark.slow
def test_a_run_starts_its_reports_kernel_before_its_gates_and_closes_it(tmp_path: Path) -> None:
    from coder_eval.run.finish import AfterRun, early_kernel
    from coder_eval.run_dir import RunDir

    run = RunDir(SKILL_AB)
    with early_kernel(run, AfterRun(reports_dir=tmp_path / "pages"), start=True) as kernel:
        assert kernel is not None and kernel.manager.has_kernel  # started on entry, before any gate
        assert kernel.warmed()
    assert kernel.manager is None  # closed on the way out
    with early_kernel(run, AfterRun(reports_dir=tmp_path / "pages"), start=False) as none:
        assert none is None  # nothing to render (or a resume that keeps its reports): no kernel


def test_a_reports_kernel_that_cannot_start_early_fails_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coder_eval.run.finish import AfterRun, early_kernel
    from coder_eval.run_dir import RunDir

    def broken(self: ReportKernel, folder: Path) -> None:
        raise RuntimeError("no kernel today")

    monkeypatch.setattr(ReportKernel, "start", broken)
    with early_kernel(RunDir(SKILL_AB), AfterRun(reports_dir=tmp_path / "pages"), start=True) as kernel:
        assert kernel is not None and kernel.manager is None  # the reports start (and report) their own
