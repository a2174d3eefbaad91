"""``sandbox.limits``: defaults every task has, overridable, lifted with null; who enforces which."""

from __future__ import annotations

import re
import subprocess
import textwrap
import uuid
from pathlib import Path

import pytest

from coder_eval.sandbox.cgroups import BASH, Cgroup, rlimits, ulimits
from coder_eval.sandbox.docker.container import limit_flags
from coder_eval.sandbox.spec import Limits
from coder_eval.task import load_tasks

from .builders import needs_bwrap, run
from .conftest import MakeSandbox


def limits_of(tmp_path: Path, block: str) -> Limits:
    path = tmp_path / "task.yaml"
    path.write_text(
        textwrap.dedent(f"""
        task_id: t
        initial_prompt: hi
        agent: {{kind: none}}
        sandbox: {{driver: tempdir{block}}}
        success_criteria: [{{type: file_exists, path: x}}]
        """),
        encoding="utf-8",
    )
    return load_tasks([path])[0].sandbox.limits


def test_a_task_without_limits_has_the_defaults(tmp_path: Path) -> None:
    limits = limits_of(tmp_path, "")

    assert (limits.max_memory_mb, limits.max_pids, limits.max_disk_mb) == (4096, 1024, 1024)
    assert (limits.max_workspace_mb, limits.max_workspace_files, limits.max_cpu_seconds) == (
        1024,
        50_000,
        None,
    )
    assert limit_flags(limits) == [
        "--memory", "4096m", "--memory-swap", "4096m", "--pids-limit", "1024",
        "--ulimit", f"fsize={1024 * 1024 * 1024}:{1024 * 1024 * 1024}",
    ]  # fmt: skip


def test_a_task_sets_or_lifts_each_limit(tmp_path: Path) -> None:
    limits = limits_of(tmp_path, ", limits: {max_memory_mb: 512, max_pids: null, max_workspace_files: null}")

    assert (limits.max_memory_mb, limits.max_pids, limits.max_workspace_files) == (512, None, None)
    assert limit_flags(limits)[:4] == ["--memory", "512m", "--memory-swap", "512m"]
    assert "--pids-limit" not in limit_flags(limits)


def test_without_a_control_group_only_what_the_task_set_becomes_an_rlimit(tmp_path: Path) -> None:
    defaults, chosen = (
        limits_of(tmp_path, ""),
        limits_of(tmp_path, ", limits: {max_memory_mb: 512, max_pids: 64}"),
    )
    size = f"--fsize={1024 * 1024 * 1024}"

    assert rlimits(defaults) == ["/usr/bin/prlimit", size, "--"]
    assert rlimits(chosen) == [
        "/usr/bin/prlimit",
        f"--as={512 * 1024 * 1024}",
        "--nproc=64",
        size,
        "--",
    ]
    # in a control group, which holds memory and processes, only file size and CPU time are rlimits
    assert ulimits(chosen) == [f"ulimit -f {1024 * 2048}"]


@pytest.mark.parametrize("driver", ["tempdir", pytest.param("bwrap", marks=needs_bwrap)])
@pytest.mark.parametrize("form", ["string", "argv"])
def test_a_command_runs_with_the_file_size_and_cpu_limits_in_bytes_and_seconds(
    make_sandbox: MakeSandbox, driver: str, form: str
) -> None:
    """However they are set (``/bin/sh`` joining the control group counts file size in 512-byte
    blocks, a bash script that joins it itself in 1024-byte blocks, prlimit in bytes), the command's
    own limits are the task's, soft and hard."""
    sandbox = make_sandbox(driver, limits=Limits(max_disk_mb=3, max_cpu_seconds=7))

    command = "cat /proc/$$/limits" if form == "string" else ["cat", "/proc/self/limits"]
    shown = run(sandbox.exec(command)).stdout

    assert re.search(rf"Max file size +{3 * 1024 * 1024} +{3 * 1024 * 1024} +bytes", shown), shown
    assert re.search(r"Max cpu time +7 +7 +seconds", shown), shown


def test_a_bash_script_joins_the_control_group_itself_and_keeps_its_line_numbers(tmp_path: Path) -> None:
    """A command string is started as bash alone, which moves itself into the group (and its limits)
    before the first line of the script runs; the script's lines keep their numbers in messages."""
    group = Cgroup.make(f"test-{uuid.uuid4().hex}", Limits(max_disk_mb=3))
    if group is None:
        pytest.skip("no writable cgroup hierarchy here (not root, or no delegation)")
    try:
        argv = group.enter([BASH, "-c", "cat /proc/$$/cgroup\nno-such-command-here"], Limits(max_disk_mb=3))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)

        assert argv[0] == BASH  # one process: no /bin/sh in front of it
        ends = tuple(f"/{folder.name}" for folder in group.folders)
        joined = [line for line in done.stdout.splitlines() if line.endswith(ends)]
        assert len(joined) == len(group.folders), done.stdout  # bash itself is in each of them
        assert "line 2: no-such-command-here: command not found" in done.stderr, done.stderr
    finally:
        group.remove()


@pytest.mark.parametrize("script", [True, False])
def test_a_command_that_cannot_join_its_control_group_runs_nothing(tmp_path: Path, script: bool) -> None:
    group = Cgroup.make(f"test-{uuid.uuid4().hex}", Limits())
    if group is None:
        pytest.skip("no writable cgroup hierarchy here (not root, or no delegation)")
    group.remove()  # the group is gone: joining it fails
    marker = tmp_path / "ran"
    command = [BASH, "-c", f"touch {marker}"] if script else ["touch", str(marker)]

    done = subprocess.run(group.enter(command), capture_output=True, text=True, timeout=30)

    assert done.returncode != 0 and "cgroup.procs" in done.stderr, done
    assert not marker.exists()
