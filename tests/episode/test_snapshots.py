"""Kept workspace snapshots: ignore patterns as the sandbox applies them, the size cap, what is recorded."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from coder_eval.episode.snapshots import MB, SnapshotTarget, keep_snapshot
from coder_eval.sandbox.snapshot import write_tar


def workspace(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    tar = root.parent / "workspace.tar"
    with tar.open("wb") as out:
        write_tar(root, out)
    return tar


def members(path: Path) -> dict[str, bytes | None]:
    with tarfile.open(path, mode="r:gz") as tar:
        return {
            m.name: (f.read() if (f := tar.extractfile(m)) is not None else None) for m in tar.getmembers()
        }


def test_keeps_every_file_compressed_and_records_where(tmp_path: Path) -> None:
    tar = workspace(tmp_path / "work", {"app.py": b"print(1)\n", "data/rows.csv": b"a,b\n" * 1000})
    target = SnapshotTarget(tmp_path / "run" / "snapshots" / "t--default--r0.tar.gz", 10 * MB)
    record = keep_snapshot(tar, target)
    assert record.file == "snapshots/t--default--r0.tar.gz"
    assert record.bytes == target.path.stat().st_size < tar.stat().st_size
    assert (record.entries, record.left_out, record.note) == (3, 0, None)
    assert members(target.path) == {"app.py": b"print(1)\n", "data": None, "data/rows.csv": b"a,b\n" * 1000}


def test_ignore_patterns_leave_out_files_and_whole_folders_as_the_sandbox_does(tmp_path: Path) -> None:
    files = {
        "src/app.py": b"x",
        "node_modules/pkg/index.js": b"y",
        "build.log": b"z",
        "keep.log": b"k",
        "src/node_modules_notes.md": b"n",
    }
    tar = workspace(tmp_path / "work", files)
    ignore = ["node_modules/", "*.log", "!keep.log"]
    record = keep_snapshot(tar, SnapshotTarget(tmp_path / "s" / "e.tar.gz", MB), ignore)
    kept = members(tmp_path / "s" / "e.tar.gz")
    expected = io.BytesIO()
    write_tar(tmp_path / "work", expected, ignore=ignore)  # the sandbox verb's own filtering
    with tarfile.open(fileobj=io.BytesIO(expected.getvalue())) as direct:
        assert sorted(kept) == sorted(m.name for m in direct.getmembers())
    assert sorted(kept) == ["keep.log", "src", "src/app.py", "src/node_modules_notes.md"]
    assert record.left_out == 4  # node_modules, node_modules/pkg, its index.js, build.log


def test_a_snapshot_over_the_cap_is_not_kept_and_says_why(tmp_path: Path) -> None:
    tar = workspace(tmp_path / "work", {"noise.bin": os.urandom(50_000)})
    target = SnapshotTarget(tmp_path / "snapshots" / "e.tar.gz", 20_000)
    record = keep_snapshot(tar, target)
    assert record.file is None and record.bytes == 0
    assert record.note is not None and "0.02 MB cap" in record.note and "--snapshot-max-mb" in record.note
    assert list((tmp_path / "snapshots").iterdir()) == []  # no partial file left behind


def test_a_hard_link_whose_first_name_is_left_out_is_kept_as_a_file(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.log").write_text("same")
    os.link(root / "a.log", root / "b.txt")
    tar = tmp_path / "w.tar"
    with tar.open("wb") as out:
        write_tar(root, out)
    record = keep_snapshot(tar, SnapshotTarget(tmp_path / "s" / "e.tar.gz", MB), ["*.log"])
    assert members(tmp_path / "s" / "e.tar.gz") == {"b.txt": b"same"}
    assert (record.entries, record.left_out) == (1, 1)


def test_a_snapshot_that_cannot_be_written_is_noted_never_raised(tmp_path: Path) -> None:
    tar = workspace(tmp_path / "work", {"a.txt": b"a"})
    (tmp_path / "snapshots").write_text("a file where the folder should be")
    record = keep_snapshot(tar, SnapshotTarget(tmp_path / "snapshots" / "e.tar.gz", MB))
    assert record.file is None and record.note is not None
    assert record.note.startswith("workspace snapshot not kept: it could not be written (")
