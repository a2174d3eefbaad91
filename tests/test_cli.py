"""The command line end to end: experiments, overrides, budgets, gates, JUnit, plan, report, resume."""

from __future__ import annotations

import json
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from typer.testing import CliRunner

from coder_eval.cli import app, main
from coder_eval.run.render import Executed, ReportResult
from coder_eval.run.render_files import RenderFiles
from coder_eval.trajectory import read_trajectory
from tests.experiment.builders import two_tasks, write_experiment
from tests.helpers import coder_eval, minimal_task, write_task

AB = """
experiment_id: ab
description: the oracle against doing nothing
variants:
  - {variant_id: oracle, agent: {kind: oracle}}
  - {variant_id: nothing, agent: {kind: none}}
"""

COSTLY_AGENT = '''
from coder_eval.agents.base import AgentResult


class CostlyAgent:
    """Writes ok.txt and reports that it cost $1."""

    async def run(self, request, sink):
        await request.sandbox.exec("echo ok > ok.txt")
        return AgentResult(num_turns=1, cost_usd=1.0)
'''


def install_costly_agent(folder: Path) -> None:
    """A third-party agent kind ``costly``, registered through an entry point (found on sys.path)."""
    (folder / "costly_agent.py").write_text(textwrap.dedent(COSTLY_AGENT))
    info = folder / "costly_agent-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: costly-agent\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[coder_eval.agents]\ncostly = costly_agent:CostlyAgent\n")


class Invoked(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Any:
    """The CLI in this process (as ``main`` maps exit codes), from ``tmp_path``: fast, no start-up."""
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> Invoked:
        monkeypatch.setattr(sys, "argv", ["coder-eval", *args])
        with pytest.raises(SystemExit) as caught:
            main()
        captured = capsys.readouterr()
        return Invoked(int(caught.value.code or 0), captured.out, captured.err)

    return run


def manifest(run: Path) -> dict[str, Any]:
    return json.loads((run / "run.json").read_text())  # type: ignore[no-any-return]


def test_experiment_run_records_variants_and_provenance(invoke: Any, tmp_path: Path) -> None:
    two_tasks(tmp_path)
    write_experiment(tmp_path, AB)
    result = invoke("run", "tasks", "-e", "experiment.yaml", "-D", "run_limits.max_turns=7", "--no-report")
    assert result.returncode == 0, result.stderr
    run = (tmp_path / "runs" / "latest").resolve()
    data = manifest(run)
    assert (data["experiment_id"], data["description"]) == ("ab", "the oracle against doing nothing")
    assert data["variants"] == ["oracle", "nothing"]
    assert data["inputs"]["defines"] == ["run_limits.max_turns=7"]
    assert data["inputs"]["experiment"] == str((tmp_path / "experiment.yaml").resolve())
    assert [v["agents"] for v in data["experiment"]["variants"]] == [["oracle"], ["none"]]
    start = read_trajectory(run / "episodes" / "a--nothing--r0.jsonl").start
    assert start is not None and start.task["run_limits"]["max_turns"] == 7
    assert (start.provenance["run_limits.max_turns"], start.provenance["agent.type"]) == (
        "cli",
        "variant:nothing",
    )
    assert "pass 2  fail 2" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-D", "agent.modle=x"], "unknown field agent.modle (did you mean 'agent.model'?)"),
        (["--tags", "nothing"], "no task selected"),
    ],
)
def test_bad_input_exits_2_before_any_run(tmp_path: Path, args: list[str], message: str) -> None:
    two_tasks(tmp_path)
    result = coder_eval("run", "tasks", "--agent", "oracle", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not (tmp_path / "runs").exists()


SPLIT_TASK = """
task_id: d
initial_prompt: p
dataset: {rows: [{id: r, split: train}]}
success_criteria: [{type: file_exists, path: x}]
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--split", "test"], "no row has split='test'"),
        (["-e", "missing.yaml"], "missing.yaml: cannot read"),
        (["--agent", "orcale"], "did you mean 'oracle'?"),
        (["--sample", "0"], "'--sample': Input should be greater than or equal to 1"),
    ],
)
def test_more_bad_input_exits_2(invoke: Any, tmp_path: Path, args: list[str], message: str) -> None:
    two_tasks(tmp_path)
    write_task(tmp_path / "tasks", SPLIT_TASK, "d.yaml")
    for command in ("run", "plan"):
        result = invoke(command, "tasks", *args)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr
    assert not (tmp_path / "runs").exists()


def test_budget_stops_launching_and_keeps_a_readable_partial_run(tmp_path: Path) -> None:
    install_costly_agent(tmp_path)
    for i in range(4):
        minimal_task(tmp_path / "tasks", f"t{i}")
    result = coder_eval(
        "run",
        "tasks",
        "--agent",
        "costly",
        "--max-cost-usd",
        "1.5",
        "--no-report",
        "--junit-xml",
        "junit.xml",
        cwd=tmp_path,
    )
    assert result.returncode == 3, result.stderr
    assert "2 episodes not started" in result.stderr
    run = (tmp_path / "runs" / "latest").resolve()
    data = manifest(run)
    assert data["status"] == "budget_stopped"
    assert data["budget"] == {
        "max_cost_usd": 1.5,
        "spent_usd": 2.0,
        "stopped": True,
        "not_started": 2,
    }
    from coder_eval.analysis import load_runs, summarize

    episodes = load_runs(run).episodes
    assert len(episodes) == 2 and episodes["cost_usd"].sum() == 2.0
    assert summarize(episodes)["mean"].tolist() == [1.0]
    assert ET.parse(tmp_path / "junit.xml").getroot().get("skipped") == "2"

    again = coder_eval("run", "--resume", "--max-cost-usd", "1.5", "--no-report", cwd=tmp_path)
    assert again.returncode == 3, again.stderr  # the $2.0 already spent counts: nothing more starts
    assert manifest(run)["budget"]["spent_usd"] == 2.0
    assert len(load_runs(run).episodes) == 2


COSTLY_AB = """
experiment_id: costly-ab
variants:
  - {variant_id: costly, agent: {kind: costly}}
  - {variant_id: oracle, agent: {kind: oracle}}
"""


def test_an_until_conclusive_run_its_budget_stops_counts_every_episode_it_left(tmp_path: Path) -> None:
    install_costly_agent(tmp_path)
    for i in range(6):
        minimal_task(tmp_path / "tasks", f"t{i}")
    write_experiment(tmp_path, COSTLY_AB)

    result = coder_eval(
        "run", "tasks", "-e", "experiment.yaml", "--until-conclusive", "--max-cost-usd", "2.5", "--no-report",
        cwd=tmp_path,
    )  # fmt: skip

    assert result.returncode == 3, result.stderr
    data = manifest((tmp_path / "runs" / "latest").resolve())
    ran = len(list((tmp_path / "runs" / "latest" / "episodes").glob("*.jsonl")))
    assert data["status"] == "budget_stopped" and data["adaptive"]["stop"] == "max_cost_usd"
    assert data["budget"]["spent_usd"] == 3.0 and data["budget"]["not_started"] == 12 - ran > 0
    assert f"{12 - ran} episodes not started" in result.stderr


@pytest.mark.slow
def test_a_run_its_budget_stops_is_reported_as_far_as_it_ran_and_exits_3(tmp_path: Path) -> None:
    install_costly_agent(tmp_path)
    for i in range(4):
        minimal_task(tmp_path / "tasks", f"t{i}")

    result = coder_eval(
        "run", "tasks", "--agent", "costly", "--max-cost-usd", "1.5", cwd=tmp_path, timeout=600
    )

    assert result.returncode == 3, result.stdout + result.stderr
    (report,) = (tmp_path / "reports").iterdir()
    summary = json.loads((report / "summary.json").read_text())["reports"]["run_report"]["headline"]
    run_id = (tmp_path / "runs" / "latest").resolve().name
    assert summary["budget_stopped"] == [
        {"run_id": run_id, "max_cost_usd": 1.5, "spent_usd": 2.0, "not_started": 2}
    ]
    assert summary["n_episodes"] == 2 and summary["outcomes"] == {"pass": 2}
    page = (report / "run_report.html").read_text()
    assert f"run {run_id} was stopped by its cost cap ($2 spent of $1.5; 2 episodes not started)" in page


def test_min_pass_rate_gate_fails_with_exit_1_and_is_recorded(tmp_path: Path) -> None:
    two_tasks(tmp_path)
    write_experiment(tmp_path, AB)
    result = coder_eval(
        "run", "tasks", "-e", "experiment.yaml", "--min-pass-rate", "0.5", "--no-report", cwd=tmp_path
    )
    assert result.returncode == 1, result.stderr
    assert "gates: 1 passed, 1 failed" in result.stdout
    gates = manifest((tmp_path / "runs" / "latest").resolve())["gates"]
    assert [(g["variant_id"], g["value"], g["verdict"]) for g in gates] == [
        ("oracle", 1.0, "pass"),
        ("nothing", 0.0, "fail"),
    ]
    assert gates[0]["ci_low"] < 1.0


def test_min_pass_rate_gate_passes(invoke: Any, tmp_path: Path) -> None:
    two_tasks(tmp_path)
    result = invoke("run", "tasks", "--agent", "oracle", "--min-pass-rate", "1", "--no-report")
    assert result.returncode == 0, result.stderr
    assert "PASS" in result.stdout


LABELS = """
task_id: labels
initial_prompt: "${row.guess}"
agent: {kind: command, command: "printf %s {prompt} > answer.txt"}
dataset:
  rows:
    - {id: a, guess: pdf, label: pdf}
    - {id: b, guess: pdf, label: pdf}
    - {id: c, guess: none, label: pdf}
    - {id: d, guess: pdf, label: none}
    - {id: e, guess: none, label: none}
suite_thresholds:
  answer: {recall: RECALL, precision: 0.5}
success_criteria:
  - {id: answer, type: classification_match, path: answer.txt, expected: "${row.label}"}
"""


@pytest.mark.parametrize(("recall", "code"), [("0.6", 0), ("0.8", 1)])
def test_suite_thresholds_gate(invoke: Any, tmp_path: Path, recall: str, code: int) -> None:
    write_task(tmp_path / "tasks", LABELS.replace("RECALL", recall), "labels.yaml")
    result = invoke("run", "tasks", "--no-report", "-j", "4")
    assert result.returncode == code, result.stdout + result.stderr
    gates = manifest((tmp_path / "runs" / "latest").resolve())["gates"]
    assert [(g["gate"], g["metric"], g["label"]) for g in gates] == [
        ("labels:answer", "recall", "pdf"),
        ("labels:answer", "precision", "pdf"),
    ]
    assert gates[0]["value"] == pytest.approx(2 / 3)


def test_resume_rederives_the_plan_from_experiment_and_overrides(invoke: Any, tmp_path: Path) -> None:
    two_tasks(tmp_path)
    write_experiment(tmp_path, AB)
    run = tmp_path / "runs" / "r"
    args = ("-e", "experiment.yaml", "-D", "tags=[extra]", "--tags", "extra", "--run-dir", str(run))
    assert invoke("run", "tasks", *args, "--no-report").returncode == 0
    (run / "episodes" / "b--nothing--r0.jsonl").unlink()
    result = invoke("run", "--resume", "--run-dir", str(run), "--no-report")
    assert result.returncode == 0, result.stderr
    assert "kept 3 finished" in result.stdout
    assert len(list((run / "episodes").glob("*.jsonl"))) == 4


def test_plan_shows_variants_and_warns(invoke: Any, tmp_path: Path) -> None:
    two_tasks(tmp_path)
    write_experiment(tmp_path, "experiment_id: e\nvariants: [{variant_id: a}, {variant_id: b, repeats: 1}]\n")
    result = invoke("plan", "tasks", "-e", "experiment.yaml", "--model", "claude-x", "--repeats", "2")
    assert result.returncode == 0, result.stderr
    assert "experiment e: 2 variants × 2 tasks" in result.stdout
    assert "claude-x" in result.stdout and "8 episodes" in result.stdout
    assert "warning: variants 'a' and 'b' resolve to the same configuration" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_plan_lists_each_tasks_agent_and_model_per_variant(invoke: Any, tmp_path: Path) -> None:
    two_tasks(tmp_path)
    minimal_task(tmp_path / "tasks", "c", extra="skip: flaky\ntags: [x]\nagent: {kind: none}\n")
    (tmp_path / "experiments").mkdir()
    write_experiment(
        tmp_path / "experiments",
        "experiment_id: ab\nvariants: [{variant_id: one, agent: {model: m1}}, {variant_id: two}]\n",
        "ab.yaml",
    )
    result = invoke(
        "plan", "tasks", "-e", "ab", "--include-skipped", "--exclude-tags", "y", "--driver", "tempdir"
    )
    assert result.returncode == 0, result.stderr
    table = result.stdout[result.stdout.index("agent · model per task") :]
    rows = {line.split("│")[1].strip(): line for line in table.splitlines() if line.count("│") >= 3}
    assert set(rows) >= {"a", "c"} and "b" not in rows
    assert "claude-code · m1" in rows["a"] and "claude-code · default" in rows["a"]
    assert "none · m1" in rows["c"]
    assert invoke("plan", "tasks", "-e", "nope").returncode == 2


class FakeReports:
    """Stands in for ``render_report`` (and its halves): records each call and returns ``ok``."""

    def __init__(self, ok: bool = True) -> None:
        self.ok = ok
        self.calls: list[tuple[str, dict[str, str], Path | None]] = []

    def __call__(
        self,
        run_dirs: list[Path],
        template: str = "run_report",
        params: Mapping[str, str] = {},
        out_dir: Path | None = None,
        timeout: float = 600,
        kernel: object = None,
    ) -> ReportResult:
        return self.publish(self.execute(run_dirs, template, params, out_dir, timeout, kernel))

    def execute(
        self,
        run_dirs: list[Path],
        template: str = "run_report",
        params: Mapping[str, str] = {},
        out_dir: Path | None = None,
        timeout: float = 600,
        kernel: object = None,
    ) -> Executed:
        """Stands in for ``execute_report`` (a run's reports: executed, then published)."""
        self.calls.append((template, dict(params), out_dir))
        error = None if self.ok else "boom"
        return Executed(template, list(run_dirs), RenderFiles(Path("reports"), template), error, Path.cwd())

    def publish(self, executed: Executed) -> ReportResult:
        html = Path("reports") / f"{executed.template}.html"
        return ReportResult(
            html.with_suffix(".ipynb"), html, html.with_suffix(".json"), self.ok, None if self.ok else "boom"
        )


@pytest.fixture
def reports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeReports:
    fake = FakeReports()
    monkeypatch.setattr("coder_eval.run.render.render_report", fake)
    monkeypatch.setattr("coder_eval.run.render.execute_report", fake.execute)
    monkeypatch.setattr("coder_eval.run.render.publish_report", fake.publish)
    monkeypatch.setattr("coder_eval.run.report_kernel.ReportKernel.start", lambda self, folder: None)
    monkeypatch.chdir(tmp_path)
    return fake


def test_run_renders_run_compare_and_classification_reports(reports: FakeReports, tmp_path: Path) -> None:
    two_tasks(tmp_path)
    labels = LABELS.replace("suite_thresholds:\n  answer: {recall: RECALL, precision: 0.5}\n", "")
    write_task(tmp_path / "tasks", labels, "labels.yaml")
    write_experiment(tmp_path, AB.replace("agent: {kind: none}", "agent: {}"))
    result = CliRunner().invoke(app, ["run", "tasks", "-e", "experiment.yaml", "-j", "4"])
    assert result.exit_code == 0, result.output
    assert [(t, p) for t, p, _ in reports.calls] == [
        ("run_report", {}),
        ("compare_report", {}),  # the declared pair: the first variant against the other
        ("classification_report", {"criterion": "answer"}),
    ]
    assert "report: reports/compare_report.html" in result.output
    assert "headline: nothing vs oracle: no comparison: no headline task has a valid episode" in result.output


def test_report_failure_after_a_run_exits_4_and_keeps_the_run(reports: FakeReports, tmp_path: Path) -> None:
    reports.ok = False
    two_tasks(tmp_path)
    result = CliRunner().invoke(app, ["run", "tasks", "--agent", "oracle"])
    assert result.exit_code == 4
    assert "the error is shown in reports/run_report.html" in result.output
    assert len(list((tmp_path / "runs" / "latest" / "episodes").glob("*.jsonl"))) == 2


@pytest.mark.parametrize(("ok", "code"), [(True, 0), (False, 4)])
def test_report_command(reports: FakeReports, ok: bool, code: int) -> None:
    reports.ok = ok
    result = CliRunner().invoke(
        app, ["report", "runs/x", "-t", "compare_report", "-p", "baseline=a", "--out", "o"]
    )
    assert result.exit_code == code
    assert reports.calls == [("compare_report", {"baseline": "a"}, Path("o"))]


def test_report_command_bad_template_exits_2(tmp_path: Path) -> None:
    result = coder_eval("report", "runs/none", "--template", "run_reprot", cwd=tmp_path)
    assert result.returncode == 2
    assert "did you mean 'run_report'?" in result.stderr


def test_ungated_reference_arm_does_not_fail_the_run(invoke: Any, tmp_path: Path) -> None:
    write_task(tmp_path / "tasks", LABELS.replace("RECALL", "0.6"), "labels.yaml")
    experiment = """
    experiment_id: guessers
    variants:
      - {variant_id: lazy, gated: false, agent: {kind: command, command: "printf none > answer.txt"}}
      - {variant_id: guesser}
    """
    write_experiment(tmp_path, textwrap.dedent(experiment))
    result = invoke("run", "tasks", "--experiment", "experiment.yaml", "--no-report", "-j", "4")
    assert result.returncode == 0, result.stdout + result.stderr
    gates = manifest((tmp_path / "runs" / "latest").resolve())["gates"]
    verdicts = {(g["variant_id"], g["metric"]): g["verdict"] for g in gates}
    assert verdicts[("lazy", "recall")] == "not gated"
    assert verdicts[("guesser", "recall")] == "pass"


def test_two_episodes_that_would_share_a_file_are_rejected(invoke: Any, tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "x--y")
    minimal_task(tmp_path / "tasks", "x")
    write_experiment(tmp_path, "experiment_id: e\nvariants: [{variant_id: z}, {variant_id: y--z}]\n")
    result = invoke("plan", "tasks", "--experiment", "experiment.yaml")
    assert result.returncode == 2
    assert "would share the episode id 'x--y--z--r0'" in result.stderr


def test_resume_refuses_options_that_change_the_run(invoke: Any, tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a")
    run = tmp_path / "runs" / "r"
    assert invoke("run", "tasks", "--agent", "oracle", "--run-dir", str(run), "--no-report").returncode == 0
    changed = invoke("run", "--resume", "--run-dir", str(run), "--agent", "none", "--no-report")
    assert changed.returncode == 2
    assert "with the inputs it started with (agent='oracle')" in changed.stderr
    same = invoke("run", "tasks", "--resume", "--run-dir", str(run), "--agent", "oracle", "--no-report")
    assert same.returncode == 0, same.stderr
