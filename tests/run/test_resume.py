"""A run killed with SIGKILL part-way loses no finished episode; --resume finishes it without duplicates."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coder_eval.trajectory import read_trajectory
from tests.helpers import coder_eval, minimal_task, write_task

SLOW_AGENT = """
agent: {kind: command, command: "sleep 0.4; echo ok > ok.txt"}
"""


def complete(run: Path) -> dict[str, bytes]:
    return {
        p.stem: p.read_bytes()
        for p in sorted((run / "episodes").glob("*.jsonl"))
        if read_trajectory(p).complete
    }


def wait_for(predicate: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def test_sigkill_then_resume(tmp_path: Path) -> None:
    for i in range(6):
        minimal_task(tmp_path / "tasks", f"t{i}", extra=SLOW_AGENT)
    run = tmp_path / "runs" / "killed"
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--repeats", "2", "--run-dir", str(run)]
    process = subprocess.Popen(
        args, cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: len(complete(run)) >= 3 if run.exists() else False, timeout=60)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    before = complete(run)
    assert 3 <= len(before) < 12
    started = {p.stem for p in (run / "episodes").glob("*.jsonl")}

    result = coder_eval("run", "--resume", "--run-dir", str(run), cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    after = complete(run)
    assert len(after) == 12 and len(list((run / "episodes").glob("*.jsonl"))) == 12
    assert {k: after[k] for k in before} == before  # finished episodes kept byte for byte
    partial = (
        {p.name.split(".")[0] for p in (run / "partial").glob("*.jsonl")}
        if (run / "partial").exists()
        else set()
    )
    assert partial == started - set(before)  # the interrupted episode was set aside, not deleted
    assert f"kept {len(before)} finished" in result.stdout


def test_resume_refuses_a_different_plan(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", extra="agent: {kind: oracle}\n")
    run = tmp_path / "runs" / "r"
    assert coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path).returncode == 0
    minimal_task(tmp_path / "tasks", "b", extra="agent: {kind: oracle}\n")
    result = coder_eval("run", "--resume", "--run-dir", str(run), cwd=tmp_path)
    assert result.returncode == 2
    assert "the tasks differ from the run's plan" in result.stderr


def test_run_without_resume_refuses_an_existing_run_dir(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", extra="agent: {kind: oracle}\n")
    run = tmp_path / "runs" / "r"
    assert coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path).returncode == 0
    result = coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path)
    assert result.returncode == 2 and "use --resume" in result.stderr


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigterm_interrupts_cleanly(tmp_path: Path, sigint: str) -> None:
    """CI cancels with SIGTERM: the run stops like Ctrl-C, kills the agent and says 'interrupted';
    also when it was started in the background by a script, which leaves SIGINT ignored."""
    minimal_task(tmp_path / "tasks", "slow", extra='agent: {kind: command, command: "sleep 108.25"}\n')
    run = tmp_path / "runs" / "terminated"
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--run-dir", str(run), "--no-report"]
    process = subprocess.Popen(
        args,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_sigint if sigint == "ignored" else None,
    )
    try:
        wait_for(lambda: any((run / "episodes").glob("*.jsonl")) if run.exists() else False, timeout=60)
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:  # it ignored SIGTERM: the test fails, leaving nothing running
            process.kill()
            process.wait()

    assert process.returncode == 130, stderr
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    deadline = time.monotonic() + 5
    while running(b"sleep\x00108.25"):
        assert time.monotonic() < deadline, "the agent's process survived SIGTERM"
        time.sleep(0.1)


def running(cmdline: bytes) -> bool:
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if cmdline in entry.read_bytes():
                return True
    return False


ORPHAN_AGENT = """
sandbox: {driver: tempdir}
agent: {kind: command, command: "setsid env -i /bin/sleep 321.75 > /dev/null 2>&1 < /dev/null & sleep 30"}
"""


def test_resume_after_sigkill_reaps_the_dead_sessions_sandboxes_and_orphans(
    tmp_path: Path, short_tmp: Path
) -> None:
    from tests.executors.builders import descends
    from tests.sandbox.builders import alive

    minimal_task(tmp_path / "tasks", "orphan", extra=ORPHAN_AGENT)
    run = tmp_path / "runs" / "killed"
    # Sandboxes go to a temporary folder of this test's own: every run reaps the dead leftovers it
    # finds in its temporary folder, so a run of another test in /tmp would reap these first. It is
    # short: under a $TMPDIR too long for the harness's sockets, sandboxes are made in /tmp.
    env = {**os.environ, "TMPDIR": str(short_tmp)}
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--run-dir", str(run), "--no-report"]
    process = subprocess.Popen(
        args,
        cwd=tmp_path,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: bool(alive("sleep 321.75", within=0)), timeout=60)
        for sentinel in alive("coder_eval sentinel", within=0):  # killed too: a power cut, the OOM killer
            if descends(sentinel, process.pid):
                os.kill(sentinel, signal.SIGKILL)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    logged = [json.loads(line) for line in (run / "sandboxes.jsonl").read_text().splitlines()]
    assert alive("sleep 321.75", within=0) and all(Path(r["base"]).exists() for r in logged)
    assert logged and all(Path(r["base"]).is_relative_to(short_tmp) for r in logged)

    (tmp_path / "tasks" / "orphan.yaml").write_text(
        (tmp_path / "tasks" / "orphan.yaml").read_text().replace("& sleep 30", "& true")
    )
    result = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path, env=env)

    assert "left by a harness that is no longer running" in result.stderr
    assert alive("sleep 321.75") == []
    assert not any(Path(r["base"]).exists() for r in logged)


def finished_run(tmp_path: Path, *task_ids: str, extra: str = "agent: {kind: oracle}\n") -> Path:
    for task_id in task_ids:
        minimal_task(tmp_path / "tasks", task_id, extra=extra)
    run = tmp_path / "runs" / "r"
    result = coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return run


def starts(run: Path) -> dict[str, dict[str, object]]:
    found = {}
    for path in sorted((run / "episodes").glob("*.jsonl")):
        start = read_trajectory(path).start
        assert start is not None
        found[path.stem] = start.task
    return found


def test_resume_refuses_finished_episodes_whose_task_changed_and_replan_runs_them_again(
    tmp_path: Path,
) -> None:
    run = finished_run(tmp_path, "a", "b")
    (run / "episodes" / "b--default--r0.jsonl").unlink()  # never finished: it runs either way
    task = tmp_path / "tasks" / "a.yaml"
    task.write_text(task.read_text().replace("write ok to ok.txt", "write ok to ok.txt, then stop"))

    refused = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)

    assert refused.returncode == 2, refused.stderr
    assert "1 finished episode(s) ran a task that has changed since" in refused.stderr
    assert "a--default--r0: initial_prompt" in refused.stderr and "--replan" in refused.stderr
    assert not (run / "episodes" / "b--default--r0.jsonl").exists()  # nothing ran

    replanned = coder_eval("run", "--resume", "--replan", "--run-dir", str(run), "--no-report", cwd=tmp_path)

    assert replanned.returncode == 0, replanned.stderr
    assert "1 finished episode(s) ran a task that has changed since" in replanned.stderr
    assert {k: t["initial_prompt"] for k, t in starts(run).items()} == {
        "a--default--r0": "write ok to ok.txt, then stop",
        "b--default--r0": "write ok to ok.txt",
    }
    assert [p.name for p in (run / "partial").iterdir()] == ["a--default--r0.0.jsonl"]  # kept, not lost
    resumes = json.loads((run / "run.json").read_text())["resumes"]
    assert [(r["replanned"], r["unfinished"], r["kept"]) for r in resumes] == [
        (["a--default--r0"], ["b--default--r0"], 0)
    ]


def test_resume_refuses_a_task_whose_files_changed(tmp_path: Path) -> None:
    fixture = tmp_path / "tasks" / "fixtures" / "app"
    fixture.mkdir(parents=True)
    (fixture / "README").write_text("v1\n")
    template = "sandbox: {template_sources: [{template_dir: fixtures/app}]}\nagent: {kind: oracle}\n"
    run = finished_run(tmp_path, "a", extra=template)
    (fixture / "README").write_text("v2\n")

    refused = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)

    assert refused.returncode == 2, refused.stderr
    assert "a--default--r0: the files it reads or its hidden fields" in refused.stderr


def test_the_same_task_resumes_with_no_refusal(tmp_path: Path) -> None:
    run = finished_run(tmp_path, "a", "b")
    (run / "episodes" / "b--default--r0.jsonl").unlink()
    resumed = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "kept 1 finished" in resumed.stdout


FLAKY_SETUP = """
sandbox: {{driver: tempdir}}
pre_run: [{{command: "test -f {flag}", fail_on_error: true}}]
agent: {{kind: oracle}}
"""
BROKEN_GRADER = """
task_id: broken
initial_prompt: write ok to ok.txt
sandbox: {{driver: tempdir}}
agent: {{kind: command, command: "echo ran >> {log}"}}
success_criteria:
  - {{type: hidden_tests, command: "true"}}
"""
"""A task whose gating grader cannot run (no hidden_tests block): invalid, and not the harness's."""


def test_resume_runs_the_harness_invalid_again_and_the_agents_only_when_asked(tmp_path: Path) -> None:
    flag, log = tmp_path / "setup-ready", tmp_path / "broken.log"
    minimal_task(tmp_path / "tasks", "setup", extra=FLAKY_SETUP.format(flag=flag))
    write_task(tmp_path / "tasks", BROKEN_GRADER.format(log=log), "broken.yaml")
    run = tmp_path / "runs" / "r"
    first = coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path)
    assert first.returncode == 5, first.stderr  # both invalid: nothing was measured
    ends = {p.stem: read_trajectory(p).end for p in (run / "episodes").glob("*.jsonl")}
    assert {k: (e.outcome, e.invalid_cause) for k, e in ends.items() if e} == {
        "setup--default--r0": ("invalid", "harness"),
        "broken--default--r0": ("invalid", "grader"),
    }
    flag.touch()  # the harness's trouble is over; the grader is as broken as before

    resumed = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    assert "1 finished episode(s) were left invalid by the harness" in resumed.stderr
    assert read_trajectory(run / "episodes" / "setup--default--r0.jsonl").end.outcome == "pass"  # type: ignore[union-attr]
    assert log.read_text().split() == ["ran"]  # the grader's invalid episode was kept

    retried = coder_eval(
        "run", "--resume", "--retry-invalid", "--run-dir", str(run), "--no-report", cwd=tmp_path
    )

    assert retried.returncode == 0, retried.stderr
    assert "were invalid (provider or grader): run again (--retry-invalid)" in retried.stderr
    assert log.read_text().split() == ["ran", "ran"]
    resumes = json.loads((run / "run.json").read_text())["resumes"]
    assert [(r["harness_invalid"], r["retried_invalid"]) for r in resumes] == [
        (["setup--default--r0"], []),
        ([], ["broken--default--r0"]),
    ]


def test_replan_and_retry_invalid_are_for_resume(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", extra="agent: {kind: oracle}\n")
    result = coder_eval("run", "tasks", "--replan", "--no-report", cwd=tmp_path)
    assert result.returncode == 2 and "it is for --resume" in result.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_resume_of_a_finished_run_keeps_reports_that_show_every_trajectory(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "t1", extra="agent: {kind: oracle}\n")
    first = coder_eval("run", "tasks", "--run-dir", "runs/r", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    page = tmp_path / "reports" / "r" / "run_report.html"
    rendered = page.stat().st_mtime_ns

    again = coder_eval("run", "--resume", "--run-dir", "runs/r", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "report: reports/r/run_report.html (kept: no episode ran since it was rendered)" in again.stdout
    assert "rendering" not in again.stderr and page.stat().st_mtime_ns == rendered

    trajectory = next((tmp_path / "runs" / "r" / "episodes").glob("*.jsonl"))
    os.utime(trajectory, ns=(rendered + 10**9, rendered + 10**9))  # written after the report: stale
    stale = coder_eval("run", "--resume", "--run-dir", "runs/r", cwd=tmp_path)
    assert (
        stale.returncode == 0
        and "(kept: no episode" not in stale.stdout
        and page.stat().st_mtime_ns != rendered
    )
