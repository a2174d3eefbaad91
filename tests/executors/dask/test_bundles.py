"""Task bundles: the task's folder as deterministic bytes keyed by their sha256; refused when the bytes
do not match; unpacked safely; the plan's paths moved to the copy; a file beside the folder refused."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from coder_eval.episode.plan import plan_episodes
from coder_eval.errors import InputError
from coder_eval.executors.dask.bundles import (
    Bundle,
    BundleError,
    check_travels,
    pack,
    pack_file,
    relocated,
    unpack,
)
from coder_eval.task import load_tasks

TASK = """\
task_id: calc
initial_prompt: fix {folder}/calc please
sandbox:
  template_sources:
    - template_dir: fixtures/calc
hidden_tests:
  path: fixtures/hidden
success_criteria:
  - {{type: hidden_tests, command: python -m pytest -q hidden_tests}}
"""


def suite(root: Path, template: str = "fixtures/calc") -> Path:
    (root / "fixtures" / "calc").mkdir(parents=True)
    (root / "fixtures" / "hidden").mkdir()
    (root / "fixtures" / "calc" / "core.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "fixtures" / "hidden" / "test_core.py").write_text("def test_add(): ...\n")
    run = root / "fixtures" / "calc" / "run.sh"
    run.write_text("#!/bin/sh\n")
    run.chmod(0o755)
    text = TASK.format(folder=root).replace("fixtures/calc", template, 1)
    (root / "calc.yaml").write_text(text)
    return root


def test_the_same_files_are_the_same_bundle_wherever_and_whenever_they_lie(tmp_path: Path) -> None:
    first = suite(tmp_path / "a")
    copy = tmp_path / "b"
    shutil.copytree(first, copy)
    os.utime(copy / "fixtures" / "calc" / "core.py", (1, 1))
    (copy / "fixtures" / "calc" / "__pycache__").mkdir()
    (copy / "fixtures" / "calc" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0")

    assert pack(first) == pack(copy)
    assert pack(first).sha256 == hashlib.sha256(pack(first).data).hexdigest()
    (copy / "fixtures" / "hidden" / "test_core.py").write_text("def test_add(): assert False\n")
    assert pack(copy).sha256 != pack(first).sha256


def test_a_worker_unpacks_the_folder_once_with_its_files_and_executable_bits(tmp_path: Path) -> None:
    folder = suite(tmp_path / "suite")
    bundle = pack(folder)
    root = unpack(bundle.sha256, bundle.data, tmp_path / "cache")

    assert root == tmp_path / "cache" / bundle.sha256
    assert (root / "fixtures" / "hidden" / "test_core.py").read_text() == "def test_add(): ...\n"
    assert os.access(root / "fixtures" / "calc" / "run.sh", os.X_OK)
    assert not os.access(root / "fixtures" / "calc" / "core.py", os.X_OK)
    assert unpack(bundle.sha256, b"", tmp_path / "cache") == root  # cached: nothing is read again


def test_bytes_that_do_not_match_their_hash_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    bundle = pack(suite(tmp_path / "suite"))
    tampered = bundle.data[:-8] + bytes(8)

    with pytest.raises(BundleError, match="refused, its bytes hash to"):
        unpack(bundle.sha256, tampered, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_an_archive_that_reaches_out_of_its_folder_is_not_unpacked(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    data = raw.getvalue()

    with pytest.raises(BundleError, match="not a bundle"):
        unpack(hashlib.sha256(data).hexdigest(), data, tmp_path / "cache" / "in")
    assert not (tmp_path / "cache" / "escaped.txt").exists()
    assert list((tmp_path / "cache" / "in").iterdir()) == []


def test_the_plan_on_the_worker_names_the_copy_and_nothing_else_changes(tmp_path: Path) -> None:
    folder = suite(tmp_path / "suite")
    plan = plan_episodes(load_tasks([folder]))[0]
    moved = relocated(plan, tmp_path / "copy")

    assert moved.task.source_path == tmp_path / "copy" / "calc.yaml"
    assert moved.task.hidden_tests is not None and plan.task.hidden_tests is not None
    assert moved.task.hidden_tests.path == str(tmp_path / "copy" / "fixtures" / "hidden")
    source = moved.task.sandbox.template_sources[0]
    assert getattr(source, "path", None) == str(tmp_path / "copy" / "fixtures" / "calc")
    assert moved.task.prompt == plan.task.prompt  # text that only mentions the folder is left alone
    assert moved.episode_id == plan.episode_id and moved.seed == plan.seed
    assert plan.task.hidden_tests.path == str(folder / "fixtures" / "hidden")  # the original is kept


def test_a_task_naming_a_file_beside_its_folder_cannot_travel(tmp_path: Path) -> None:
    folder = suite(tmp_path / "suite" / "tasks", template="../shared")
    (tmp_path / "suite" / "shared").mkdir()
    task = load_tasks([folder])[0]

    with pytest.raises(InputError, match=r"shared, outside the task's folder .*move the file into it"):
        check_travels(task)
    check_travels(load_tasks([suite(tmp_path / "other")])[0])  # everything inside: nothing to say


def test_a_fifo_in_the_folder_is_left_out_and_never_opened(tmp_path: Path) -> None:
    import threading

    folder = suite(tmp_path / "suite")
    os.mkfifo(folder / "fixtures" / "pipe")  # read, it would block until someone writes
    packed: list[Bundle] = []
    worker = threading.Thread(target=lambda: packed.append(pack(folder)), daemon=True)
    worker.start()
    worker.join(timeout=30)

    assert not worker.is_alive() and len(packed) == 1
    (folder / "fixtures" / "pipe").unlink()
    assert packed[0] == pack(folder)  # as if it were not there


def test_links_inside_the_folder_travel_as_links_and_one_out_of_it_is_refused(tmp_path: Path) -> None:
    folder = suite(tmp_path / "suite")
    (folder / "fixtures" / "calc" / "same.py").symlink_to(folder / "fixtures" / "calc" / "core.py")
    root = unpack_bundle(pack(folder), tmp_path / "cache")
    assert (root / "fixtures" / "calc" / "same.py").readlink() == Path("core.py")  # made relative to travel
    assert (root / "fixtures" / "calc" / "same.py").read_text().startswith("def add")

    (folder / "fixtures" / "out").symlink_to(tmp_path)
    with pytest.raises(InputError, match=r"fixtures/out: a symbolic link out of the task's folder .* \(to "):
        pack(folder)


def test_a_folder_is_packed_into_a_file_as_it_is_in_memory(tmp_path: Path) -> None:
    folder = suite(tmp_path / "suite")
    sha256 = pack_file(folder, tmp_path / "bundle.tar.gz")
    assert Bundle(sha256, (tmp_path / "bundle.tar.gz").read_bytes()) == pack(folder)


def unpack_bundle(bundle: Bundle, cache: Path) -> Path:
    return unpack(bundle.sha256, bundle.data, cache)
