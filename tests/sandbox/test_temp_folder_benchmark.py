"""``benchmarks/temp_folder.py`` names each folder's filesystem and prints, for the temporary folder
and each one asked for, a sandbox's cycle, a synced file and a trivial episode, with their ratios."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO


def temp_folder(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``benchmarks/temp_folder.py ARGS``, its output captured."""
    script = REPO / "benchmarks" / "temp_folder.py"
    return subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=180, check=check
    )


def test_the_temp_folder_benchmark_prints_a_row_per_folder(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()

    result = temp_folder("--rounds", "3", "--episodes", "3", "--folder", str(extra))

    lines = result.stdout.splitlines()
    assert lines[0].startswith("median of 3: a tempdir sandbox made")
    rows = [line.split() for line in lines[2:]]
    assert [row[0] for row in rows][-1] == str(extra.resolve()), result.stdout
    for fields in rows:
        assert all(float(fields[i]) > 0 for i in (1, 4, 7)), fields
        assert [fields[i] for i in (2, 5, 8)] == ["ms"] * 3, fields
        assert len(fields) > 10, fields  # the filesystem is named
    assert [rows[0][i] for i in (3, 6, 9)] == ["1.00x"] * 3  # the first folder is the baseline


def test_the_filesystem_of_a_folder_is_its_mount_s_and_ext4_says_whether_it_keeps_a_journal() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from temp_folder import filesystem, mount_of
    finally:
        sys.path.remove(str(REPO / "benchmarks"))

    mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    proc = [fields for fields in mounts if fields[1] == "/proc"]
    assert mount_of(Path("/proc/self")) == ("proc", proc[0][0])
    root_kind = next(fields[2] for fields in mounts if fields[1] == "/")
    named = filesystem(Path("/"))
    if root_kind == "ext4":
        assert named.startswith(("ext4 with a journal (", "ext4 without a journal ("))
    else:
        assert named == root_kind


def test_held_back_prints_the_cost_of_a_create_before_and_at_each_time_after_the_deletion(
    tmp_path: Path,
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()

    result = temp_folder("--held-back", "50", "--at", "0,0.5", "--folder", str(extra))

    lines = result.stdout.splitlines()
    assert lines[0] == "microseconds to create a file, before and after 50 files were deleted in its folder"
    assert lines[1].split()[:4] == ["folder", "before", "0", "s"], lines[1]
    rows = [line.split() for line in lines[2:]]
    assert rows[-1][0] == str(extra.resolve()), result.stdout
    for fields in rows:
        assert all(int(fields[i]) >= 0 for i in (1, 2, 3)), fields  # before, 0 s and 0.5 s after
        assert len(fields) > 4, fields  # the filesystem is named
    assert not any(path.name.startswith("temp-folder-") for path in extra.iterdir())  # nothing left


def test_a_bad_time_after_the_deletion_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()

    result = temp_folder("--held-back", "5", "--at", "soon", "--folder", str(extra), check=False)

    assert result.returncode == 2 and "--at" in result.stderr and "2,30,60" in result.stderr, result.stderr
    assert list(extra.iterdir()) == []
