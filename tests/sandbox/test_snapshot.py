"""Snapshots in and out: a hostile archive cannot write outside the workspace or plant special files."""

from __future__ import annotations

import errno
import io
import tarfile
from pathlib import Path

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox.snapshot import (
    LOOP_CHECKS,
    MB,
    Bounds,
    WorkspaceTooLarge,
    extract_tar,
    retar,
    write_tar,
)


def archive(*members: tuple[tarfile.TarInfo, bytes]) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    path = Path(__import__("tempfile").mkstemp(suffix=".tar")[1])
    path.write_bytes(buffer.getvalue())
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, target: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, target, mode
    return info


def test_round_trip_keeps_files_modes_and_inner_links(tmp_path: Path) -> None:
    source, dest = tmp_path / "src", tmp_path / "dest"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "run.sh").write_text("echo hi\n")
    (source / "pkg" / "run.sh").chmod(0o755)
    (source / "link").symlink_to("pkg/run.sh")
    buffer = io.BytesIO()

    write_tar(source, buffer)
    buffer.seek(0)
    dropped = extract_tar(buffer, dest)

    assert dropped == []
    assert (dest / "pkg" / "run.sh").read_text() == "echo hi\n" and (
        dest / "pkg" / "run.sh"
    ).stat().st_mode & 0o100
    assert (dest / "link").is_symlink() and (dest / "link").read_text() == "echo hi\n"


def test_hostile_members_are_dropped_and_named(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    path = archive(
        (member("ok.txt"), b"fine"),
        (member("../outside.txt"), b"escaped"),
        (member(str(outside)), b"absolute"),
        (member("up", tarfile.SYMTYPE, "../../etc"), b""),
        (member("abs", tarfile.SYMTYPE, "/etc/passwd"), b""),
        (member("dev", tarfile.CHRTYPE), b""),
        (member("fifo", tarfile.FIFOTYPE), b""),
        (member("suid", mode=0o4755), b"x"),
    )
    dest = tmp_path / "dest"

    dropped = extract_tar(path, dest)

    assert not outside.exists()
    assert sorted(p.name for p in dest.iterdir()) == ["ok.txt", "suid", outside.parts[1]]
    assert (dest / str(outside).lstrip("/")).read_text() == "absolute"  # the leading '/' is stripped
    assert not (dest / "suid").stat().st_mode & 0o4000
    assert {d.name for d in dropped} == {"../outside.txt", "up", "abs", "dev", "fifo"}


def test_a_corrupt_archive_is_a_sandbox_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tar"
    bad.write_bytes(b"not a tar at all" * 100)

    with pytest.raises(SandboxError, match="cannot extract the workspace snapshot"):
        extract_tar(bad, tmp_path / "dest")


def test_names_an_engine_writes_in_pax_records_keep_their_names_through_retar(tmp_path: Path) -> None:
    long_name = "deep/" + "d" * 120 + "/file.txt"
    odd = "caf\udce9-\udcff.txt"  # not UTF-8 on disk
    engine = io.BytesIO()  # as `docker cp C:/workspace -` writes the folder: names in PAX records
    with tarfile.open(fileobj=engine, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in ("workspace", "workspace/deep", f"workspace/deep/{'d' * 120}"):
            tar.addfile(member(name, tarfile.DIRTYPE))
        for name in ("café.txt", long_name, odd):
            info = member(f"workspace/{name}")
            info.size = 2
            tar.addfile(info, io.BytesIO(b"hi"))
        tar.addfile(member("workspace/link-é", tarfile.SYMTYPE, "café.txt"))
    engine.seek(0)
    snapshot = io.BytesIO()

    retar(engine, snapshot)
    snapshot.seek(0)
    extract_tar(snapshot, tmp_path / "dest")

    assert (tmp_path / "dest" / "café.txt").read_text() == "hi"
    assert (tmp_path / "dest" / long_name).read_text() == "hi"
    assert (tmp_path / "dest" / odd).read_text() == "hi"
    assert (tmp_path / "dest" / "link-é").read_text() == "hi"
    assert not (tmp_path / "dest" / "workspace").exists()


def flood(root: Path, files: int, size: int = 0) -> Path:
    root.mkdir()
    for i in range(files):
        with (root / f"f{i}").open("wb") as handle:
            handle.truncate(size)  # sparse: no blocks, all apparent size
    return root


def test_a_workspace_past_its_bounds_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    sparse, many = flood(tmp_path / "sparse", 3, size=5 * MB), flood(tmp_path / "many", 30)
    out = io.BytesIO()

    with pytest.raises(WorkspaceTooLarge, match=r"pass 10 MB at .*max_workspace_mb counts apparent sizes"):
        write_tar(sparse, out, bounds=Bounds(max_bytes=10 * MB))
    with pytest.raises(WorkspaceTooLarge, match=r"more than 20 files.*max_workspace_files"):
        write_tar(many, out, bounds=Bounds(max_entries=20))
    assert out.getvalue() == b""
    assert write_tar(many, out, bounds=Bounds(max_bytes=10 * MB, max_entries=30)) == 30


def test_an_engine_stream_past_its_bounds_is_stopped_at_the_first_member_over(tmp_path: Path) -> None:
    engine = io.BytesIO()
    with tarfile.open(fileobj=engine, mode="w") as tar:
        tar.addfile(member("workspace", tarfile.DIRTYPE))
        for i in range(3):
            info = member(f"workspace/f{i}")
            info.size = 4 * MB
            tar.addfile(info, io.BytesIO(b"\0" * info.size))
    bounds = Bounds(max_bytes=10 * MB)

    engine.seek(0)
    with pytest.raises(WorkspaceTooLarge):
        retar(engine, io.BytesIO(), bounds=bounds)
    engine.seek(0)
    with pytest.raises(WorkspaceTooLarge):
        extract_tar(engine, tmp_path / "dest", Bounds(max_entries=2))

    assert bounds.bytes == 12 * MB and bounds.entries == 3  # counted from headers: the third not read
    assert len(list((tmp_path / "dest").iterdir())) == 1


def nest(root: Path, depth: int, name: str = "d") -> None:
    path = root
    for _ in range(depth):
        path = path / name
    path.mkdir(parents=True)


def test_a_workspace_nested_past_its_depth_or_path_length_is_refused(tmp_path: Path) -> None:
    nest(tmp_path / "deep", 12)
    nest(tmp_path / "long", 19, name="n" * 200)  # 3,819 bytes: within PATH_MAX, past the bound
    out = io.BytesIO()

    with pytest.raises(
        WorkspaceTooLarge, match=r"deeper than 10 levels \('d/d/.*' is 11 deep.*max_workspace_depth"
    ):
        write_tar(tmp_path / "deep", out, bounds=Bounds(max_depth=10))
    with pytest.raises(WorkspaceTooLarge, match=r"path longer than 3584 bytes .*3617 bytes, 18 levels deep"):
        write_tar(tmp_path / "long", out, bounds=Bounds())
    assert out.getvalue() == b""
    assert write_tar(tmp_path / "deep", out, bounds=Bounds(max_depth=12)) == 12


def test_a_link_the_system_gave_up_on_once_is_walked_again_before_it_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first walk of fresh links can fail with ELOOP under a concurrent rename; a loop (here a target
    every walk gives up on) fails each one."""
    walks: dict[str, int] = {}
    real_stat = Path.stat

    def stat(self: Path, **kwargs: bool) -> object:
        walks[self.name] = walks.get(self.name, 0) + 1
        if self.name == "looped" or (self.name == "flaky" and walks[self.name] == 1):
            raise OSError(errno.ELOOP, "Too many levels of symbolic links", str(self))
        return real_stat(self, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    flaky = archive((member("flaky"), b"x"), (member("kept", tarfile.SYMTYPE, "flaky"), b""))
    assert extract_tar(flaky, tmp_path / "one") == []
    assert (tmp_path / "one" / "kept").read_text() == "x" and walks["flaky"] == 2

    looped = archive((member("looped"), b"x"), (member("dropped", tarfile.SYMTYPE, "looped"), b""))
    dropped = extract_tar(looped, tmp_path / "two")
    assert [d.name for d in dropped] == ["dropped"] and walks["looped"] == LOOP_CHECKS  # each walk gave up


def test_an_archive_nested_past_its_depth_is_refused_as_it_is_read(tmp_path: Path) -> None:
    deep = archive(*[(member("/".join(["d"] * i), tarfile.DIRTYPE), b"") for i in range(1, 6)])

    with pytest.raises(WorkspaceTooLarge, match="deeper than 3 levels"):
        extract_tar(deep, tmp_path / "dest", Bounds(max_depth=3))


def read_through_links(path: Path) -> str:
    """``path``'s text, read again when the system gave up on its links: a first walk of fresh links
    can count more than it followed while a rename runs anywhere (``snapshot._loops``)."""
    for _ in range(LOOP_CHECKS - 1):
        try:
            return path.read_text()
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
    return path.read_text()


def test_links_chained_past_what_the_system_follows_are_dropped(tmp_path: Path) -> None:
    links = [(member("l0000", tarfile.SYMTYPE, "a.txt"), b"")]
    links += [(member(f"l{i:04d}", tarfile.SYMTYPE, f"l{i - 1:04d}"), b"") for i in range(1, 1500)]
    chain = archive((member("a.txt"), b"x"), *links)

    dropped = extract_tar(chain, tmp_path / "dest")

    assert read_through_links(tmp_path / "dest" / "l0039") == "x"  # 40 links: as many as the system follows
    assert dropped[0].name == "l0041"  # the links after it are kept, leading to nothing
    assert {d.reason for d in dropped} == {"a link through more links than the system follows"}
