"""A run's task files frozen when it is planned: what its episodes run is what was hashed.

Example::

    with freeze(plans, "local") as frozen:          # InputError (exit 2) before any episode runs
        frozen.plans[0].frozen.task_hash           # 'sha256:…', from the frozen files
        frozen.content_hashes(resolution)          # run.json's task_hashes, from the same files

Before the first episode, each task's files are read once, into a folder of this run's own in the
system's temporary folder, and each episode runs from there: a template edited while the run goes on
does not reach its later episodes, and ``episode_start.task_hash`` (what ``--resume`` compares) and
``run.json``'s ``task_hashes`` (what ``--baseline`` pairs on) are the hashes of those bytes.

- ``local``: the files and folders a task names (``task_files.named_paths``: templates, starter
  files, hidden tests, the reference, scripted model scripts, schemas) are copied, each once; the
  episode runs with its paths moved to the copies, and its trajectory names them where the task
  does. A Dockerfile (its image is keyed by its build context's content) and a git clone (keyed by its
  commit) are read where they are.
- ``dask``: the task's folder is packed as its bundle (``executors/bundles.py``), which the workers
  unpack; it is unpacked here too, and hashed from there.

Either way: a symbolic link out of the task's folder is refused naming it, FIFOs, sockets and
devices are left out (never opened), files stream through, and a folder over the cap
(``$CODER_EVAL_BUNDLE_MAX_MB``) is refused saying so. The folder holds an ``owner.json`` like a
sandbox's, so a run killed with ``kill -9`` has it removed by the next run (``reap_dead``).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coder_eval.episode.plan import EpisodePlan, FrozenFiles
from coder_eval.errors import InputError
from coder_eval.executors.dask.bundles import Member, members, open_regular, pack_file, unpack_file
from coder_eval.sandbox.leftovers import OWNER_FILE, owner
from coder_eval.sandbox.trees import remove_tree
from coder_eval.task import TaskSpec
from coder_eval.task.files import named_paths, task_hash

if TYPE_CHECKING:
    from coder_eval.experiment import Resolution

UNFROZEN = ("url",)
"""Keys of paths read where they are (a git clone's source: keyed by its commit)."""


@dataclass(frozen=True)
class Frozen:
    """The plans, each naming its frozen files, and the folder holding them."""

    plans: list[EpisodePlan]
    folder: Path

    def content_hashes(self, resolution: Resolution) -> dict[str, str]:
        """run.json's ``task_hashes`` (``provenance``), the bytes read from the frozen copies."""
        from coder_eval.run.provenance import task_content_hashes

        moves: dict[str, str] = {}
        for plan in self.plans:
            moves.update(dict(plan.frozen.moves) if plan.frozen else {})
        return task_content_hashes(resolution, moves)


@contextmanager
def freeze(plans: Sequence[EpisodePlan], executor: str) -> Iterator[Frozen]:
    """Freeze the plans' task files for ``executor`` (``local`` or ``dask``); the copies are removed
    when the block ends."""
    folder = _scratch()
    try:
        try:
            found = _Freezer(folder, executor).frozen(plans)
        except OSError as exc:  # the temporary folder is full, or cannot be written
            raise InputError(
                f"cannot copy the task files into {folder}: {exc.strerror or exc}; make room there, or set "
                "TMPDIR to a folder with room"
            ) from exc
        yield Frozen(found, folder)
    finally:
        remove_tree(folder)


def check_frozen(plans: Sequence[EpisodePlan], executor: str) -> None:
    """Before a run is made: ``InputError`` for task files ``freeze`` would refuse (a link out of a
    task's folder, a folder over the cap); nothing is read but their listing."""
    checked: set[str] = set()
    for task in {id(p.task): p.task for p in plans if p.task.source_path is not None}.values():
        roots = [str(task.source_dir)] if executor == "dask" else frozen_roots(task)
        for root in set(roots) - checked:
            checked.add(root)
            members(Path(root), boundary(Path(root), task.source_dir))


def _scratch() -> Path:
    """A folder of this run's own, owned as a sandbox is (``reap_dead`` removes it once it is dead)."""
    try:
        folder = Path(tempfile.mkdtemp(prefix="coder_eval-frozen-"))
        record = {**owner(secrets.token_hex(16)), "base": str(folder)}
        (folder / OWNER_FILE).write_text(json.dumps(record), encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot make a folder for the task files in {tempfile.gettempdir()}: {exc}"
        ) from exc
    return folder


class _Freezer:
    """Each task folder (dask) or named path (local) frozen once, however many plans share it."""

    def __init__(self, folder: Path, executor: str) -> None:
        self.folder, self.executor = folder, executor
        self.copies: dict[str, str] = {}
        self.bundles: dict[str, tuple[str, Path, str]] = {}
        self.by_task: dict[int, tuple[FrozenFiles, str | None]] = {}

    def frozen(self, plans: Sequence[EpisodePlan]) -> list[EpisodePlan]:
        out = []
        for plan in plans:
            if plan.task.source_path is None:
                out.append(plan)
                continue
            if id(plan.task) not in self.by_task:
                self.by_task[id(plan.task)] = self._task(plan.task)
            files, bundle = self.by_task[id(plan.task)]
            out.append(replace(plan, frozen=files, bundle=bundle or plan.bundle))
        return out

    def _task(self, task: TaskSpec) -> tuple[FrozenFiles, str | None]:
        if self.executor == "dask":
            sha256, packed, copy = self._bundle(task.source_dir)
            moves = ((str(task.source_dir), copy),)
            return FrozenFiles(task_hash(task, dict(moves)), moves, packed), sha256
        copies = tuple((root, self._copy(root, task.source_dir)) for root in frozen_roots(task))
        return FrozenFiles(task_hash(task, dict(copies)), copies), None

    def _bundle(self, folder: Path) -> tuple[str, Path, str]:
        key = str(folder)
        if key not in self.bundles:
            staging = self.folder / f"bundle-{len(self.bundles)}.tar.gz"
            sha256 = pack_file(folder, staging)
            packed = staging.rename(self.folder / f"{sha256}.tar.gz")
            with packed.open("rb") as data:
                copy = unpack_file(sha256, data, self.folder / "copies")
            self.bundles[key] = (sha256, packed, str(copy))
        return self.bundles[key]

    def _copy(self, root: str, task_folder: Path) -> str:
        """The copy of one named path (a folder, or a file: under a folder of its own, by name)."""
        if root not in self.copies:
            path = Path(root)
            found = members(path, boundary(path, task_folder))
            target = self.folder / hashlib.sha256(root.encode()).hexdigest()[:16] / (path.name or "root")
            target.parent.mkdir(parents=True)
            if path.is_dir():
                target.mkdir()
            copy_members(found, target)
            self.copies[root] = str(target)
        return self.copies[root]


def boundary(root: Path, task_folder: Path) -> Path | None:
    """What a link under ``root`` may point into: the task's folder, when ``root`` lies in it; else
    ``root`` itself (None)."""
    return task_folder if root == task_folder or task_folder in root.parents else None


def frozen_roots(task: TaskSpec) -> list[str]:
    """The paths a task names that a run freezes: every folder or regular file but a Dockerfile and
    its mounts (under ``sandbox.docker``) and a git clone's source; none inside another (what does
    not exist, or is a FIFO, is read where it is named, as before: seeding says what is wrong)."""
    data = task.model_dump(mode="json")
    sandbox = dict(data.get("sandbox") or {})
    sandbox.pop("docker", None)
    data = {**data, "sandbox": sandbox}
    roots = [r for r in named_paths(_without(data, UNFROZEN)) if Path(r).is_dir() or Path(r).is_file()]
    return [r for r in roots if not any(r != o and r.startswith(o.rstrip("/") + "/") for o in roots)]


def _without(value: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def copy_members(found: list[Member], target: Path) -> None:
    """Lay ``found`` out under ``target`` (a file member with no name: ``target`` itself), each file
    streamed through, links as they were, executable bits kept."""
    for member in found:
        where = target / member.name if member.name else target
        if member.kind == "dir":
            where.mkdir(parents=True, exist_ok=True)
        elif member.kind == "link":
            where.symlink_to(member.target)
        else:
            with open_regular(member.path) as (handle, status):
                if handle is None:
                    continue
                with where.open("wb") as out:
                    shutil.copyfileobj(handle, out, 1 << 20)
                where.chmod(0o755 if status.st_mode & 0o111 else 0o644)
