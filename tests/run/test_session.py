"""A run from Python: created, interrupted, resumed, gated, reported, with no command line, and the
same from a notebook that papermill executes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import nbformat
import papermill
import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.errors import InputError, ResumeRefused, RunLocked
from coder_eval.run import AfterRun, Batch, Quiet, RunInputs, RunSession
from coder_eval.run_dir import RunDir
from coder_eval.trajectory import EpisodeEnd
from tests.helpers import REPO

AB = """
experiment_id: ab
description: the oracle against doing nothing
defaults: {repeats: 2}
variants:
  - {variant_id: oracle, agent: {kind: oracle}}
  - {variant_id: nothing, agent: {kind: none}}
"""


def ab_inputs(folder: Path) -> RunInputs:
    (folder / "ab.yaml").write_text(AB, encoding="utf-8")
    task = REPO / "tasks" / "examples" / "write_file.yaml"
    return RunInputs(paths=[str(task)], experiment=str(folder / "ab.yaml"), driver="tempdir")


class StopAfter(Quiet):
    """Ctrl-C once ``count`` episodes have finished."""

    def __init__(self, count: int) -> None:
        self.count, self.ended = count, 0
        self.totals: tuple[int, int] | None = None

    def started(self, total: int, done: int, tampered: Sequence[str]) -> None:
        self.totals = (total, done)

    def episode_done(self, plan: EpisodePlan, end: EpisodeEnd) -> None:
        self.ended += 1
        if self.ended == self.count:
            raise KeyboardInterrupt


def test_a_run_is_created_interrupted_resumed_gated_and_reported_from_python(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "ab"
    with RunSession.create(ab_inputs(tmp_path), run_dir, command=["notebook"]) as session:
        assert [p.episode_id for p in session.resolution.plans][:1] == ["write-greeting--oracle--r0"]
        with pytest.raises(KeyboardInterrupt):
            session.execute(Batch(jobs=1), StopAfter(1))
    assert RunDir.open(run_dir).read_manifest().status == "interrupted"

    with RunSession.reopen(run_dir) as session:
        decision = session.resume()
        assert decision.record.kept == 1 and len(decision.record.unfinished) == 3
        progress = StopAfter(99)
        batch = session.execute(Batch(jobs=2), progress)
        assert progress.totals == (4, 1) and batch.skipped_done == 1 and sum(batch.outcomes.values()) == 3
        junit, reports = tmp_path / "junit.xml", tmp_path / "pages"
        result = session.finish(AfterRun(min_pass_rate=0.5, junit_xml=junit, reports_dir=reports))

    assert result.totals.outcomes == {"pass": 2, "fail": 2, "invalid": 0}
    assert [(g.variant_id, g.verdict) for g in result.finished.gates or []] == [
        ("oracle", "pass"),
        ("nothing", "fail"),
    ]
    assert result.exit_code == 1  # a gate failed: what `coder-eval run` exits with
    assert [o.template for o in result.finished.reports] == ["run_report", "compare_report"]
    assert all(o.ok and o.html_path is not None and o.html_path.is_file() for o in result.finished.reports)
    assert sorted(p.name for p in reports.glob("*.html")) == ["compare_report.html", "run_report.html"]
    manifest = RunDir.open(run_dir).read_manifest()
    assert manifest.status == "completed" and manifest.command == ["notebook"]
    assert manifest.gates is not None and [g.verdict for g in manifest.gates] == ["pass", "fail"]
    assert manifest.headline is not None and manifest.headline["line"] == result.finished.headline_line
    assert len(manifest.resumes) == 1 and manifest.inputs is not None
    assert ET.parse(junit).getroot().get("tests") == "4"


def test_a_session_holds_the_lock_and_refuses_what_the_command_line_refuses(tmp_path: Path) -> None:
    inputs = ab_inputs(tmp_path)
    run_dir = tmp_path / "runs" / "ab"
    with RunSession.create(inputs, run_dir) as session:
        with pytest.raises(RunLocked):
            RunSession.reopen(run_dir)
        session.execute(Batch(jobs=2))
        result = session.finish(AfterRun(report=False))
    assert result.exit_code == 0 and result.finished.gates is None  # no gate asked for
    with pytest.raises(InputError, match="already exists"):
        RunSession.create(inputs, run_dir)
    with RunSession.reopen(run_dir) as session, pytest.raises(InputError, match="inputs it started with"):
        session.resume(RunInputs(repeats=5))
    with RunSession.reopen(run_dir) as session:
        assert session.resume().record.kept == 4  # the same tasks, all finished: nothing runs again


def test_a_resume_of_changed_tasks_is_refused_before_anything_runs(tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text((REPO / "tasks/examples/write_file.yaml").read_text(), encoding="utf-8")
    inputs = RunInputs(paths=[str(task)], agent="oracle", driver="tempdir")
    with RunSession.create(inputs, tmp_path / "runs" / "one") as session:
        session.execute()
    task.write_text(task.read_text().replace("hello, world", "hi there"), encoding="utf-8")
    with RunSession.reopen(tmp_path / "runs" / "one") as session, pytest.raises(ResumeRefused):
        session.resume()
    with RunSession.reopen(tmp_path / "runs" / "one") as session:
        assert session.resume(replan=True).rerun == {"write-greeting--default--r0"}


NOTEBOOK = [
    "from pathlib import Path\nfrom coder_eval.run import AfterRun, Batch, RunInputs, RunSession",
    "inputs = RunInputs(paths=[TASK], experiment=EXPERIMENT, driver='tempdir')\n"
    "with RunSession.create(inputs, Path(RUN_DIR)) as session:\n"
    "    session.execute(Batch(jobs=2))\n",
    "with RunSession.reopen(Path(RUN_DIR)) as session:\n"
    "    decision = session.resume()\n"
    "    session.execute()\n"
    "    result = session.finish(AfterRun(min_pass_rate=0.5, report=False))\n",
    "import json\n"
    "gates = [(g.variant_id, g.verdict) for g in result.finished.gates]\n"
    "Path(OUT).write_text(json.dumps({'code': int(result.exit_code), 'gates': gates, "
    "'kept': decision.record.kept, 'outcomes': result.totals.outcomes}))",
]


def test_a_notebook_runs_resumes_and_gates_a_run(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell("TASK = ''\nEXPERIMENT = ''\nRUN_DIR = ''\nOUT = ''")
    parameters.metadata["tags"] = ["parameters"]
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    notebook.cells = [parameters, *(nbformat.v4.new_code_cell(code) for code in NOTEBOOK)]
    source = tmp_path / "run.ipynb"
    nbformat.write(notebook, source)
    inputs = ab_inputs(tmp_path)
    out = tmp_path / "out.json"
    papermill.execute_notebook(
        str(source),
        str(tmp_path / "ran.ipynb"),
        parameters={
            "TASK": inputs.paths[0],
            "EXPERIMENT": inputs.experiment,
            "RUN_DIR": str(tmp_path / "runs" / "nb"),
            "OUT": str(out),
        },
        kernel_name="python3",
        cwd=str(tmp_path),
        progress_bar=False,
    )
    found = json.loads(out.read_text(encoding="utf-8"))
    assert found["code"] == 1 and found["gates"] == [["oracle", "pass"], ["nothing", "fail"]]
    assert found["kept"] == 4 and found["outcomes"] == {"pass": 2, "fail": 2, "invalid": 0}
    assert (tmp_path / "runs" / "nb" / "run.json").is_file()
