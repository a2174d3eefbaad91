"""``coder-eval run --until-conclusive`` as a user runs it: the decision printed in words, the
experiment's block, bad options and blocks refused (exit 2) before any run directory is made, and
``regrade`` deciding again from the regraded verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import REPO, coder_eval

AB = REPO / "experiments" / "coin_ab.yaml"


def test_the_block_runs_until_the_answer_and_the_console_says_why(tmp_path: Path) -> None:
    result = coder_eval(
        "run", "-e", str(AB), "-j", "2", "--run-dir", str(tmp_path / "ab"), "--no-report", cwd=REPO
    )

    record = json.loads((tmp_path / "ab" / "run.json").read_text())["adaptive"]
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"until conclusive: {record['reason']}" in " ".join(result.stdout.split())
    assert record["decision"] == "better" and record["rule"]["seed"] == 0


def test_fixed_design_runs_every_task_even_with_the_block(tmp_path: Path) -> None:
    args = ("run", "-e", str(AB), "--fixed-design", "--max-tasks", "3", "--run-dir", str(tmp_path / "f"))
    refused = coder_eval(*args, cwd=REPO)

    assert refused.returncode == 2 and "--fixed-design" in refused.stderr
    assert not (tmp_path / "f").exists()


def test_options_override_the_block_and_fail_on_worse_reports_an_inconclusive_stop(tmp_path: Path) -> None:
    run_dir = tmp_path / "capped"
    result = coder_eval(
        "run", "-e", str(AB), "--until-conclusive", "--max-tasks", "4", "--delta", "0.1",
        "--fail-on", "worse", "--run-dir", str(run_dir), "--no-report", cwd=REPO,
    )  # fmt: skip

    manifest = json.loads((run_dir / "run.json").read_text())
    record = manifest["adaptive"]
    assert result.returncode == 0, result.stderr
    assert (record["rule"]["delta"], record["max_tasks"], record["stop"]) == (0.1, 4, "max_tasks")
    said = " ".join(result.stdout.split())
    assert "inconclusive after 4 of at most 4 tasks (the task cap)" in said
    (gate,) = manifest["gates"]  # --fail-on worse reads the stop, and says it was inconclusive
    assert (gate["gate"], gate["verdict"]) == ("until-conclusive", "pass")
    assert (
        gate["note"].startswith("inconclusive: inconclusive after 4")
        and "until-conclusive with_skill" in said
    )


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--decide-on", "pass_rate", "cannot decide"),
        ("--delta", "1.5", "--delta"),
        ("--max-tasks", "0", "--max-tasks"),
    ],
)
def test_a_bad_option_is_refused_before_anything_is_made(
    tmp_path: Path, option: str, value: str, said: str
) -> None:
    result = coder_eval(
        "run", "-e", str(AB), "--until-conclusive", option, value, "--run-dir", str(tmp_path / "r"), cwd=REPO
    )

    assert result.returncode == 2 and said in result.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ("{delta: 0.2, stop_early: true}", "until_conclusive.stop_early"),
        ("{metrics: [pass_rate]}", "cannot decide"),
        ("{candidate: with_skil}", "did you mean 'with_skill'"),
        ("{delta: 2}", "until_conclusive.delta"),
    ],
)
def test_a_malformed_block_names_the_file_and_field(tmp_path: Path, block: str, said: str) -> None:
    text = AB.read_text().replace(
        "until_conclusive: {delta: 0.2, metrics: [passed], seed: 0}", f"until_conclusive: {block}"
    )
    text = text.replace("../tasks/coin/coin.yaml", str(REPO / "tasks" / "coin" / "coin.yaml"))
    (tmp_path / "bad.yaml").write_text(text)

    result = coder_eval("run", "-e", str(tmp_path / "bad.yaml"), "--run-dir", str(tmp_path / "r"), cwd=REPO)

    assert result.returncode == 2 and "bad.yaml" in result.stderr and said in result.stderr
    assert not (tmp_path / "r").exists()


def test_one_variant_is_refused_before_the_run_directory_is_made(tmp_path: Path) -> None:
    task = REPO / "tasks" / "examples" / "write_file.yaml"
    result = coder_eval("run", str(task), "--until-conclusive", "--run-dir", str(tmp_path / "r"), cwd=REPO)

    assert result.returncode == 2 and "compares two variants" in result.stderr
    assert not (tmp_path / "r").exists()


def test_regrade_decides_again_from_the_regraded_verdicts(tmp_path: Path) -> None:
    coder_eval("run", "-e", str(AB), "--run-dir", str(tmp_path / "ab"), "--no-report", cwd=REPO)
    task = (REPO / "tasks" / "coin" / "coin.yaml").read_text().replace('"^hello, world$"', '"^never$"')
    (tmp_path / "coin").mkdir()
    (tmp_path / "coin" / "coin.yaml").write_text(task)
    (tmp_path / "coin" / "coin.jsonl").write_text((REPO / "tasks" / "coin" / "coin.jsonl").read_text())

    result = coder_eval(
        "regrade", str(tmp_path / "ab"), str(tmp_path / "coin" / "coin.yaml"),
        "--run-dir", str(tmp_path / "rg"), "--no-report", cwd=REPO,
    )  # fmt: skip

    before = json.loads((tmp_path / "ab" / "run.json").read_text())["adaptive"]
    after = json.loads((tmp_path / "rg" / "run.json").read_text())["adaptive"]
    assert result.returncode == 0, result.stdout + result.stderr
    assert before["decision"] == "better" and after["decision"] != "better"
    assert after["order"] == before["order"] and after["reason"].startswith("regraded: ")
    assert all(look["value"] == 0 for look in after["paths"][0]["looks"])


SUITE_TASK = """
task_id: t{i}
initial_prompt: write ok to ok.txt
pre_run: ["{pre_run}"]
agent: {{kind: command, command: "{command}"}}
sandbox: {{driver: tempdir}}
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [ok]}}
"""
ARMS = """
experiment_id: ab
variants:
  - {variant_id: baseline}
  - {variant_id: with_skill, agent: {command: "echo ok > ok.txt"}}
"""


def suite(folder: Path, command: str, tasks: int = 3, pre_run: str = "true") -> Path:
    """Tasks whose agent runs ``command`` on ``baseline`` and passes on ``with_skill``, after a set-up
    that runs ``pre_run`` (one that fails is the harness's fault: both arms' episodes ``invalid``)."""
    (folder / "tasks").mkdir(parents=True)
    for i in range(tasks):
        (folder / "tasks" / f"t{i}.yaml").write_text(SUITE_TASK.format(i=i, command=command, pre_run=pre_run))
    (folder / "ab.yaml").write_text(ARMS)
    return folder


def run_files(run_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob("*.jsonl*") if p.is_file())


@pytest.fixture(scope="module")
def conclusive_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """One ``--until-conclusive`` run that the tests below try to resume (its folder, its run
    directory, its exit code): a refused resume changes nothing in it, so they can share it."""
    folder = suite(tmp_path_factory.mktemp("conclusive"), "exit 3")
    run_dir = folder / "runs" / "b"
    first = coder_eval(
        "run", "tasks", "-e", "ab.yaml", "--until-conclusive", "--run-dir", str(run_dir), "--no-report",
        cwd=folder,
    )  # fmt: skip
    return folder, run_dir, first.returncode


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--delta", "0.05"], "'--delta': this run recorded delta 0.2 in its run.json"),
        (["--max-episodes", "4"], "'--max-episodes': this run recorded max_episodes none (no cap)"),
        (["--decide-on", "score"], "'--decide-on': this run recorded metrics passed"),
        (["--max-tasks", "2"], "'--max-tasks': this run recorded max_tasks none (no cap)"),
        (["--fixed-design"], "'--fixed-design': this run was started --until-conclusive (delta 0.2"),
    ],
)
def test_a_resume_that_asks_for_another_rule_is_refused_naming_the_recorded_one(
    conclusive_run: tuple[Path, Path, int], option: list[str], said: str
) -> None:
    folder, run_dir, _ = conclusive_run
    before = (run_dir / "run.json").read_bytes(), run_files(run_dir)

    refused = coder_eval("run", "--resume", "--run-dir", str(run_dir), "--no-report", *option, cwd=folder)

    assert refused.returncode == 2 and said in " ".join(refused.stderr.split()), refused.stderr
    assert "Traceback" not in refused.stderr
    assert ((run_dir / "run.json").read_bytes(), run_files(run_dir)) == before


def test_a_resume_that_gives_the_recorded_rule_again_is_accepted(
    conclusive_run: tuple[Path, Path, int],
) -> None:
    folder, run_dir, first = conclusive_run
    same = coder_eval(
        "run", "--resume", "--run-dir", str(run_dir), "--no-report", "--delta", "0.2", cwd=folder
    )
    assert same.returncode == first, same.stderr


def test_until_conclusive_cannot_be_added_to_a_fixed_design_run_on_resume(tmp_path: Path) -> None:
    folder = suite(tmp_path, "exit 3")
    run_dir = folder / "runs" / "f"
    coder_eval("run", "tasks", "-e", "ab.yaml", "--run-dir", str(run_dir), "--no-report", cwd=folder)

    refused = coder_eval("run", "--resume", "--run-dir", str(run_dir), "--until-conclusive", cwd=folder)

    assert refused.returncode == 2 and "started with a fixed design" in refused.stderr, refused.stderr


@pytest.mark.parametrize(("pre_run", "stop"), [("exit 3", "blocked"), ("true", "decided")])
def test_a_stop_is_final_a_resume_runs_nothing_more(tmp_path: Path, pre_run: str, stop: str) -> None:
    folder = suite(tmp_path, "echo no > ok.txt", tasks=30, pre_run=pre_run)
    run_dir = folder / "runs" / "s"
    first = coder_eval(
        "run", "tasks", "-e", "ab.yaml", "--until-conclusive", "--run-dir", str(run_dir), "--no-report",
        cwd=folder,
    )  # fmt: skip
    record = json.loads((run_dir / "run.json").read_text())["adaptive"]
    assert record["stop"] == stop, first.stdout + first.stderr
    files = run_files(run_dir)

    for _ in range(2):
        again = coder_eval("run", "--resume", "--run-dir", str(run_dir), "--no-report", cwd=folder)
        assert again.returncode == first.returncode, again.stdout + again.stderr
        assert f"this run had stopped ({stop}); a stop is final, so nothing more runs" in again.stderr
    assert run_files(run_dir) == files
    assert json.loads((run_dir / "run.json").read_text())["adaptive"] == record
