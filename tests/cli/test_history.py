"""``history``, ``run --baseline/--fail-on`` and ``report --format markdown`` as a CI job uses them,
on tasks whose command agent passes or fails as the command line says (no model, fast)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import coder_eval, write_task

TASK = """
task_id: t{i}
initial_prompt: write ok
agent: {{kind: command, command: "echo ok > ok.txt"}}
sandbox: {{driver: tempdir}}
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [ok]}}
"""
FAILS = "agent.command=echo no > ok.txt"
HOLD = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(120)"
"""A process that holds the store given as its argument (as another job indexing would)."""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    for i in range(8):
        write_task(tmp_path / "tasks", TASK.format(i=i), f"t{i}.yaml")
    return tmp_path


def run(suite: Path, branch: str, *args: str) -> tuple[int, str]:
    env = {**os.environ, "CODER_EVAL_BRANCH": branch}
    env.pop("CODER_EVAL_STORE", None)
    done = coder_eval("run", "tasks", "--no-report", "-j", "4", *args, cwd=suite, env=env)
    return done.returncode, done.stdout + done.stderr


def test_a_called_regression_fails_the_run_and_noise_does_not(suite: Path) -> None:
    assert run(suite, "main")[0] == 0
    code, text = run(suite, "pr", "-D", FAILS, "--baseline", "latest-on-main", "--fail-on", "worse")
    assert code == 1, text
    assert "--fail-on worse: at 8 tasks × 1 repeat a drop in pass rate is called with 80 % power from" in text
    assert (
        "baseline │ default" in text
        and "FAIL" in text
        and "p = 0.008: baseline better; 8 tasks paired" in text
    )
    gates = json.loads((suite / "runs" / "latest" / "run.json").read_text())["gates"]
    assert [(g["gate"], g["verdict"]) for g in gates] == [("baseline", "fail")]
    code, text = run(suite, "pr", "--baseline", "latest-on-main", "--fail-on", "worse")
    assert code == 0, text


def test_a_first_run_on_a_branch_has_no_baseline_and_passes(suite: Path) -> None:
    code, text = run(suite, "main", "--baseline", "latest-on-main", "--fail-on", "worse")
    assert code == 0
    assert "no baseline: latest-on-main names no completed run" in text


def test_a_baseline_that_names_nothing_exits_2_before_running(suite: Path) -> None:
    code, text = run(suite, "main", "--baseline", "nosuchrun")
    assert code == 2 and "no such run" in text
    assert not (suite / "runs" / "latest").exists()
    code, text = run(suite, "main", "--fail-on", "worse")
    assert code == 2 and "it needs --baseline" in text


def test_a_changed_task_is_not_paired_and_the_summary_says_so(suite: Path) -> None:
    run(suite, "main")
    write_task(suite / "tasks", TASK.format(i=3).replace("write ok", "write ok, please"), "t3.yaml")
    run(suite, "pr", "-D", FAILS)
    done = coder_eval(
        "report", "runs/latest", "--format", "markdown", "--baseline", "latest-on-main", cwd=suite
    )
    assert done.returncode == 0, done.stderr
    assert "pairing: 7 tasks paired; not paired: 1 changed since the baseline (t3)" in done.stdout
    assert "| pass rate | 100.0% | 0.0% |" in done.stdout


def test_history_lists_indexed_runs_and_filters_them(suite: Path) -> None:
    run(suite, "main")
    run(suite, "pr", "--no-index")
    listed = coder_eval("history", cwd=suite)
    assert listed.returncode == 0 and listed.stdout.count("completed") == 1
    indexed = coder_eval("history", "--index", "runs", "--branch", "pr", cwd=suite)
    assert "1 runs indexed, 1 unchanged, 0 unreadable" in indexed.stderr
    assert indexed.stdout.count("completed") == 1 and " pr " in indexed.stdout
    assert "no runs match" in coder_eval("history", "--task", "nosuch", cwd=suite).stdout
    assert coder_eval("history", "--rebuild", cwd=suite).returncode == 2


def test_the_experiment_file_can_hold_the_gate(suite: Path) -> None:
    (suite / "gate.yaml").write_text(
        "experiment_id: gated\nvariants: [{variant_id: default}]\nbaseline: {run: latest-on-main}\n"
    )
    run(suite, "main")
    code, text = run(suite, "pr", "-e", "gate.yaml", "-D", FAILS)
    assert code == 1 and "baseline better" in text, text
    (suite / "gate.yaml").write_text(
        "experiment_id: gated\nvariants: [{variant_id: default}]\nbaseline: {run: nosuchrun}\n"
    )
    code, text = run(suite, "pr", "-e", "gate.yaml")
    assert code == 2 and "gate.yaml: baseline: run: nosuchrun: no run folder" in text, text


def test_history_tasks_finds_the_planted_flaky_and_constant_tasks(tmp_path: Path) -> None:
    from tests.analysis.stats.test_items import planted
    from tests.store.histories import write_run

    for i in range(4):
        write_run(tmp_path / "runs", f"run{i}", planted(i), day=i)
    done = coder_eval("history", "--index", "runs", "--tasks", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.split()[:3] == ["flaky", "sha256:a/flaky", "4/4,"] for line in lines)
    assert any(line.split()[:3] == ["easy", "always", "passes"] for line in lines)
    assert any(line.split()[:3] == ["hard", "always", "fails"] for line in lines)
    assert "run --exclude-tags quarantine" in done.stdout
    assert "steady" not in [line.split()[0] for line in lines if "sha256" in line]


def test_run_ids_print_whole_on_a_narrow_terminal(suite: Path) -> None:
    run(suite, "main")
    run_id = (suite / "runs" / "latest").resolve().name
    listed = coder_eval("history", cwd=suite, columns=60)
    assert listed.returncode == 0, listed.stderr
    assert any(line.startswith(f"{run_id} ") for line in listed.stdout.splitlines()), listed.stdout


def no_traceback(text: str) -> bool:
    """Neither Python's traceback nor the one typer draws in a box."""
    return "Traceback" not in text and "╭─" not in text


@pytest.mark.parametrize("how", ["cut", "garbled", "foreign", "text"])
def test_a_bad_store_never_fails_a_finished_run_and_rebuild_moves_it_aside(suite: Path, how: str) -> None:
    from tests.store.test_connection import spoil

    assert run(suite, "main")[0] == 0
    store = suite / "runs" / "history.duckdb"
    spoil(store, how)
    before = store.read_bytes()
    code, text = run(suite, "pr")
    assert code == 0, text
    assert "warning: runs/history.duckdb: " in text and "--rebuild" in text and "index it later" in text
    assert no_traceback(text), text
    assert store.read_bytes() == before  # never written to
    listed = coder_eval("history", cwd=suite)
    assert listed.returncode == 2 and listed.stderr.startswith("error: runs/history.duckdb: ")
    assert no_traceback(listed.stdout + listed.stderr), listed.stderr
    rebuilt = coder_eval("history", "--index", "runs", "--rebuild", cwd=suite)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "not a usable run store; moved aside to runs/history.duckdb.aside-" in rebuilt.stderr
    assert "2 runs indexed" in rebuilt.stderr and rebuilt.stdout.count("completed") == 2
    (aside,) = (suite / "runs").glob("history.duckdb.aside-*[0-9Z]")
    assert aside.read_bytes() == before


def test_rebuild_rebuilds_a_store_of_an_older_schema(suite: Path) -> None:
    import duckdb

    run(suite, "main")
    with duckdb.connect(str(suite / "runs" / "history.duckdb")) as con:
        con.execute("UPDATE store_meta SET value = '0' WHERE key = 'schema_version'")
    refused = coder_eval("history", cwd=suite)
    assert refused.returncode == 2 and "schema 0" in refused.stderr and "--rebuild" in refused.stderr
    rebuilt = coder_eval("history", "--index", "runs", "--rebuild", cwd=suite)
    assert rebuilt.returncode == 0 and "1 runs indexed" in rebuilt.stderr, rebuilt.stderr


def limited(max_bytes: int) -> None:
    """In the child: files may grow to ``max_bytes`` (a disk that fills), as a full disk answers."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, resource.RLIM_INFINITY))


def test_a_full_disk_while_indexing_never_fails_the_run(suite: Path) -> None:
    import subprocess
    import sys

    run(suite, "main")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("CODER_EVAL_STORE", None)
    argv = [sys.executable, "-m", "coder_eval", "run", "tasks", "--no-report", "-j", "4"]
    done = subprocess.run(  # the store's log of the new run is larger than one trajectory
        argv, cwd=suite, env=env, capture_output=True, text=True, timeout=300,
        preexec_fn=lambda: limited(9000), check=False,
    )  # fmt: skip
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    assert "cannot index" in text and "File too large" in text and "index it later" in text
    assert "cannot rollback" not in text and no_traceback(text), text
    indexed = coder_eval("history", "--index", "runs", cwd=suite)
    assert indexed.returncode == 0 and "1 runs indexed, 1 unchanged" in indexed.stderr, indexed.stderr


def test_a_busy_store_leaves_the_gate_not_gated_never_failed(suite: Path) -> None:
    import subprocess
    import sys

    assert run(suite, "main")[0] == 0
    store = suite / "runs" / "history.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(store)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        os.environ["CODER_EVAL_STORE_WAIT"] = "1"
        try:
            code, text = run(suite, "pr", "-D", FAILS, "--baseline", "latest-on-main", "--fail-on", "worse")
        finally:
            del os.environ["CODER_EVAL_STORE_WAIT"]
    finally:
        holder.kill()
        holder.wait()
    assert code == 7, text
    assert f"not gated: {'runs/history.duckdb'}: the run store is busy: another process holds it" in text
    assert "not gated: the store is busy" in text and "FAIL" not in text and no_traceback(text)
    gates = json.loads((suite / "runs" / "latest" / "run.json").read_text())["gates"]
    assert [(g["gate"], g["verdict"]) for g in gates] == [("baseline", "not gated")]


def test_a_baseline_that_cannot_name_a_run_is_refused_before_any_episode(suite: Path) -> None:
    code, text = run(suite, "main", "--baseline", "latest-on-", "--fail-on", "worse")
    assert code == 2 and "--baseline 'latest-on-': names no branch" in text, text
    (suite / "notarun").mkdir()
    (suite / "notarun" / "run.json").write_text('{"results": []}')
    code, text = run(suite, "main", "--baseline", "notarun")
    assert code == 2 and "--baseline notarun: not a run folder: notarun/run.json: not a coder_eval" in text
    (suite / "gate.yaml").write_text(
        "experiment_id: gated\nvariants: [{variant_id: default}]\nbaseline: {run: latest-on-}\n"
    )
    code, text = run(suite, "pr", "-e", "gate.yaml")
    assert code == 2 and "names no branch" in text, text
    assert not (suite / "runs").exists() and no_traceback(text)


def test_a_baseline_with_no_task_in_common_passes_saying_nothing_paired(suite: Path) -> None:
    write_task(suite / "other", TASK.format(i=99), "t99.yaml")
    env = {**os.environ, "CODER_EVAL_BRANCH": "main"}
    coder_eval("run", "other", "--no-report", cwd=suite, env=env)
    code, text = run(suite, "pr", "--baseline", "latest-on-main", "--fail-on", "worse")
    assert code == 0, text
    assert (
        "nothing paired with baseline" in text
        and "8 only in this run" in text
        and "1 only in the baseline (t99)" in text
    )
    assert no_traceback(text)
    listed = coder_eval("history", "--branch", "pr", cwd=suite)
    assert listed.stdout.count("completed") == 1  # indexed
    done = coder_eval(
        "report", "runs/latest", "--format", "markdown", "--baseline", "latest-on-main", cwd=suite
    )
    assert done.returncode == 0, done.stderr
    assert "No regression called: nothing paired with baseline" in done.stdout
    unnamed = coder_eval(
        "report", "runs/latest", "--format", "markdown", "--baseline", "latest-on-", cwd=suite
    )
    assert unnamed.returncode == 2 and "names no branch" in unnamed.stderr

    said = " ".join(done.stdout.split())
    assert "also flaky at a 5 % false discovery rate (Benjamini-Hochberg; a few may be chance): none" in said
    assert "a task is named only when 1 or more of its 4 runs fail every repeat" in said
    assert "smaller suite (sized on run run3; tasks chosen on the 3 other runs)" in said
    assert " nan" not in said and "no spread: every configuration had the same pass rate on it" in said
