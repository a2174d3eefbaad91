"""Leftovers of a harness that was killed: its sandbox's control group is emptied and removed, even
when it was left frozen with processes in it."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from coder_eval.sandbox.cgroups import Cgroup
from coder_eval.sandbox.leftovers import reap
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
