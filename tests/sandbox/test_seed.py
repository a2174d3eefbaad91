"""Seeding: the verifier's workspace never holds bytecode or pytest caches the agent wrote."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from coder_eval.sandbox.provision import Provision
from coder_eval.sandbox.seed import replace_with, seed_workspace

FILES = {
    "calc/core.py": b"x = 1\n",
    "calc/__pycache__/core.cpython-311.pyc": b"forged",
    "tests/__pycache__/test_a.cpython-311-pytest-9.2.0.pyc": b"forged",
    "legacy.pyc": b"forged",
    ".pytest_cache/v/cache/lastfailed": b"{}",
    "notes.txt": b"kept",
}


def snapshot() -> io.BytesIO:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in FILES.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out.seek(0)
    return out


def restored(tmp_path: Path, role: str) -> list[str]:
    seed_workspace(tmp_path, Provision(role=role, snapshot=snapshot()))  # type: ignore[arg-type]
    return sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())


def test_the_verifier_drops_every_cache(tmp_path: Path) -> None:
    assert restored(tmp_path, "verifier") == ["calc/core.py", "notes.txt"]


def test_a_judge_copy_keeps_the_workspace_as_it_was(tmp_path: Path) -> None:
    assert len(restored(tmp_path, "judge")) == len(FILES)


def test_the_hidden_tests_replace_links_and_files_on_their_way(tmp_path: Path) -> None:
    hidden, outside, work = tmp_path / "hidden", tmp_path / "outside", tmp_path / "work"
    for folder in (hidden, outside, work):
        folder.mkdir()
    (hidden / "test_x.py").write_text("def test_x(): pass\n")
    (work / "tests").symlink_to(outside)  # where the hidden tests' folder goes
    (work / "other").mkdir()
    (work / "other" / "checks").write_text("a file where a folder goes")

    replace_with(work, "tests/hidden", hidden)
    replace_with(work, "other/checks/hidden", hidden)

    assert (work / "tests" / "hidden" / "test_x.py").is_file() and not (work / "tests").is_symlink()
    assert (work / "other" / "checks" / "hidden" / "test_x.py").is_file()
    assert list(outside.iterdir()) == []
