"""``benchmarks/cgroup_join.py`` runs where a control group can be made, and prints a row per gap
with the bare and joining medians and the join's paired cost, after how the hierarchies are mounted."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from coder_eval.sandbox.cgroups import Cgroup
from coder_eval.sandbox.spec import Limits
from tests.helpers import REPO


def test_the_join_benchmark_prints_a_row_per_gap_after_the_mounts() -> None:
    group = Cgroup.make(f"test-{uuid.uuid4().hex}", Limits())
    if group is None:
        pytest.skip("no writable cgroup hierarchy here (not root, or no delegation)")
    group.remove()

    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "cgroup_join.py"), "--rounds", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    lines = result.stdout.splitlines()
    assert lines[1].startswith(("cgroup v1; favordynmods on: ", "cgroup v2; favordynmods on: "))
    rows = [line.split() for line in lines[3:]]
    assert [row[0] for row in rows] == ["0", "10", "30", "100", "300"]
    for row in rows:
        bare, joining = float(row[2]), float(row[3])
        assert bare > 0 and joining > 0 and len(row) == 6 and row[-1] == "(ms)"
