"""Leftovers of a harness that was killed: its sandbox's control group is emptied and removed, even
when it was left frozen with processes in it."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from coder_eval.pids import start_time
from coder_eval.sandbox.cgroups import Cgroup
from coder_eval.sandbox.leftovers import group_name, reap, reap_dead
from coder_eval.sandbox.spec import Limits


def test_reap_kills_and_removes_a_control_group_left_frozen(tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    group = Cgroup.make(token, Limits(max_pids=16))
    if group is None:
        pytest.skip("no writable cgroup hierarchy here (not root, or no delegation)")
    sleeper = subprocess.Popen(group.enter(["sleep", "300"]), start_new_session=True)
    try:
        while sleeper.pid not in group.pids():
            assert sleeper.poll() is None
        freezer = [f for f in group.folders if f.parent.parent.name == "freezer"]
        for folder in freezer:  # the harness died in the middle of its own kill
            (folder / "freezer.state").write_text("FROZEN")
        base = tmp_path / "coder_eval-left"
        base.mkdir()

        assert reap(base, token) is None

        assert sleeper.wait(timeout=5) == -9
        assert Cgroup.existing(token) is None and not base.exists()
        assert all(not folder.exists() for folder in group.folders)
    finally:
        if sleeper.poll() is None:
            os.killpg(sleeper.pid, 9)
        group.remove()


def test_a_control_group_whose_sandbox_is_gone_is_removed_when_its_owner_is_dead(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    token, mine = uuid.uuid4().hex, uuid.uuid4().hex
    orphan = Cgroup.make(group_name(token, {"pid": dead.pid, "started": 12345}), Limits(max_pids=16))
    if orphan is None:
        pytest.skip("no writable cgroup hierarchy here (not root, or no delegation)")
    live = Cgroup.make(group_name(mine), Limits(max_pids=16))  # this process's: never touched
    assert live is not None and start_time(os.getpid()) is not None
    sleeper = subprocess.Popen(orphan.enter(["sleep", "301.5"]), start_new_session=True)
    try:
        while sleeper.pid not in orphan.pids():
            assert sleeper.poll() is None

        reaped, problems = reap_dead(tmp_path)  # no sandbox folder anywhere: only the groups remain

        assert (reaped, problems) == (1, [])
        assert sleeper.wait(timeout=5) == -9
        assert all(not folder.exists() for folder in orphan.folders)
        assert all(folder.exists() for folder in live.folders)
    finally:
        if sleeper.poll() is None:
            os.killpg(sleeper.pid, 9)
        orphan.remove()
        live.remove()
