"""A run directory with a damaged file: a trajectory cut inside a multi-byte character, a sandbox log
with undecodable bytes. Every reader loads the rest of the run and names the file and byte offset."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from coder_eval.analysis import load_runs
from coder_eval.trajectory import read_trajectory
from tests.helpers import coder_eval, minimal_task, write_task

ACCENTED = """
task_id: {task_id}
initial_prompt: write ok to ok.txt
reference_solution: "echo ok > ok.txt; echo café > menu.txt"
agent: {{kind: oracle}}
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [ok]}}
"""


def cut_inside_a_character(path: Path) -> int:
    """Cut ``path`` inside the last "é" it holds, as a crash mid-write would; the offset of the byte left."""
    data = path.read_bytes()
    at = data.rindex("é".encode()) + 1
    path.write_bytes(data[:at])
    return at - 1


def damaged_run(tmp_path: Path) -> tuple[Path, Path, int]:
    for task_id in ("a", "b"):
        write_task(tmp_path / "tasks", ACCENTED.format(task_id=task_id), f"{task_id}.yaml")
    run = tmp_path / "runs" / "r"
    assert coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path).returncode == 0
    damaged = run / "episodes" / "a--default--r0.jsonl"
    return run, damaged, cut_inside_a_character(damaged)


def test_a_trajectory_cut_inside_a_character_is_read_as_interrupted(tmp_path: Path) -> None:
    run, damaged, offset = damaged_run(tmp_path)

    trajectory = read_trajectory(damaged)
    assert not trajectory.complete and trajectory.start is not None
    assert any(f"unreadable (not UTF-8 at byte {offset})" in p for p in trajectory.problems)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        episodes = load_runs(run).episodes.set_index("episode_id")
    assert episodes.loc["a--default--r0", "status"] == "interrupted"
    assert episodes.loc["b--default--r0", "outcome"] == "pass"
    said = " ".join(str(w.message) for w in caught)
    assert str(damaged) in said and f"not UTF-8 at byte {offset}" in said


def test_every_command_reads_the_rest_of_a_run_with_a_cut_character(tmp_path: Path) -> None:
    run, damaged, offset = damaged_run(tmp_path)

    shown = coder_eval("show", str(run), "a--default--r0", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"unreadable (not UTF-8 at byte {offset})" in shown.stdout

    exported = coder_eval("export", str(run), "--out", str(tmp_path / "atif"), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "atif" / "b--default--r0.json").is_file()

    regraded = coder_eval(
        "regrade", str(run), "--run-dir", str(tmp_path / "runs" / "g"), "--no-report", cwd=tmp_path
    )
    assert regraded.returncode == 0, regraded.stderr

    resumed = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert read_trajectory(damaged).complete  # run again; the damaged one is kept in partial/
    assert (run / "partial" / "a--default--r0.0.jsonl").read_bytes().endswith(b"caf\xc3")


def test_resume_skips_undecodable_lines_of_the_sandbox_log(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", extra="agent: {kind: oracle}\n")
    run = tmp_path / "runs" / "r"
    assert coder_eval("run", "tasks", "--run-dir", str(run), "--no-report", cwd=tmp_path).returncode == 0
    (run / "episodes" / "a--default--r0.jsonl").unlink()
    record = {"pid": 1, "started": 0, "token": "x", "base": str(tmp_path / "gone")}
    (run / "sandboxes.jsonl").write_bytes(b'{"pid": 1, "base": "/tmp/caf\xc3\n' + json.dumps(record).encode())

    resumed = coder_eval("run", "--resume", "--run-dir", str(run), "--no-report", cwd=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    assert read_trajectory(run / "episodes" / "a--default--r0.jsonl").complete
