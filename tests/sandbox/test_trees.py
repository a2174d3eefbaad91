"""Walking and removing trees the agent built: no recursion, any depth, any modes and flags."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from coder_eval.sandbox.trees import mount_field, remove_tree, walk

ROOT = os.geteuid() == 0


def nest(root: Path, depth: int, name: str = "d") -> None:
    """``root/name/name/...`` ``depth`` levels deep (made relative to open folders: any length)."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        fd, above = os.open(name, os.O_RDONLY, dir_fd=fd), fd
        os.close(above)
    os.close(fd)


def test_walk_lists_what_os_walk_lists(tmp_path: Path) -> None:
    for folder in ("a/b", "a/c", "e"):
        (tmp_path / folder).mkdir(parents=True)
    for file in ("a/b/f.txt", "a/g.txt", "h.txt"):
        (tmp_path / file).write_text("x")
    (tmp_path / "to-a").symlink_to(tmp_path / "a")

    assert sorted(walk(tmp_path)) == sorted(os.walk(tmp_path))


def test_walk_goes_past_the_recursion_limit_and_can_be_pruned(tmp_path: Path) -> None:
    nest(tmp_path / "w", 1500)
    try:
        assert len(list(walk(tmp_path / "w"))) == 1501
        pruned = []
        for parent, dirnames, _ in walk(tmp_path / "w"):
            pruned.append(parent)
            dirnames.clear()
        assert pruned == [str(tmp_path / "w")]
    finally:
        remove_tree(tmp_path / "w")  # pytest's own clean-up of old temporary folders recurses


def test_remove_tree_removes_read_only_folders_and_accepts_a_missing_one(tmp_path: Path) -> None:
    locked = tmp_path / "tree" / "locked"
    locked.mkdir(parents=True)
    (locked / "f").write_text("x")
    locked.chmod(0o500)

    remove_tree(tmp_path / "tree")
    remove_tree(tmp_path / "tree")

    assert not (tmp_path / "tree").exists()


def test_remove_tree_removes_a_tree_deeper_and_longer_than_paths_go(tmp_path: Path) -> None:
    nest(tmp_path / "deep", 1500)
    nest(tmp_path / "long", 40, name="n" * 200)  # 8,000 bytes of path

    remove_tree(tmp_path / "deep")
    remove_tree(tmp_path / "long")

    assert list(tmp_path.iterdir()) == []


def test_remove_tree_leaves_what_links_lead_to(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("x")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "out").symlink_to(outside)

    remove_tree(tmp_path / "tree")

    assert (outside / "keep.txt").is_file() and not (tmp_path / "tree").exists()


def build_locked(tree: Path) -> None:
    """Folders without read, search or write bits, as an agent that owns them can leave them."""
    for folder in ("locked/inner/deeper", "blind/below", "bare"):
        (tree / folder).mkdir(parents=True)
    for file in ("locked/inner/deeper/f", "blind/below/g", "bare/h"):
        (tree / file).write_text("x")
    modes = {"locked/inner/deeper": 0, "locked/inner": 0, "locked": 0o100, "blind": 0o600, "bare": 0o200}
    for folder, mode in modes.items():
        (tree / folder).chmod(mode)


@pytest.mark.skipif(not ROOT, reason="switches to another user")
def test_remove_tree_removes_folders_without_read_or_search_bits_as_their_owner() -> None:
    with tempfile.TemporaryDirectory() as scratch:  # under the system's /tmp, which any user may cross
        Path(scratch).chmod(0o755)
        home = Path(scratch) / "nobody"
        home.mkdir()
        os.chown(home, 65534, 65534)
        assert removed_as_nobody(home)
        assert list(home.iterdir()) == []


def removed_as_nobody(home: Path) -> bool:
    """Build the locked tree in ``home`` and remove it, as user 65534, in a child process."""
    child = os.fork()
    if child == 0:  # pragma: no cover (the child reports through its exit code)
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            build_locked(home / "tree")
            remove_tree(home / "tree")
            code = 0 if not (home / "tree").exists() else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status) == 0


def chattr(*args: str) -> bool:
    return subprocess.run(["chattr", *args], capture_output=True, check=False).returncode == 0


def test_remove_tree_clears_immutable_and_append_only_flags(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "appendonly").mkdir(parents=True)
    (tree / "appendonly" / "h").write_text("x")
    (tree / "frozen").mkdir()
    (tree / "frozen" / "f").write_text("x")
    (tree / "frozen.txt").write_text("x")
    if not chattr("+i", str(tree / "frozen.txt")):
        pytest.skip("chattr +i is not allowed here (needs root and a file system with flags)")
    assert chattr("+a", str(tree / "appendonly")) and chattr("+i", str(tree / "frozen"))

    remove_tree(tree)

    assert not tree.exists()


def test_remove_tree_detaches_a_mount_inside_the_tree_and_never_empties_it(tmp_path: Path) -> None:
    outside, mount = tmp_path / "outside", tmp_path / "tree" / "work" / "m"
    outside.mkdir()
    (outside / "keep.txt").write_text("x")
    mount.mkdir(parents=True)
    if subprocess.run(["mount", "--bind", str(outside), str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount here")
    try:
        remove_tree(tmp_path / "tree")
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True, check=False)

    assert (outside / "keep.txt").is_file() and not (tmp_path / "tree").exists()


def test_a_mountinfo_path_field_reads_as_the_path_it_escapes() -> None:
    assert mount_field("/mnt/a\\040b") == "/mnt/a b"
    assert mount_field("/x\\011tab\\012line\\134slash") == "/x\ttab\nline\\slash"
    assert mount_field("/plain/path") == "/plain/path"
