"""Seeding a workspace on the host: template folders, inline files, git clones, mock PATH directories.

Example::

    dropped, mock_dirs = seed_workspace(workspace, provision)   # snapshot, hidden tests, templates
    install_recorders(bin_dir, provision.recorders, "/…/run/recorder.sock", workspace)
    install_tools(tools_dir, provision)                        # the verifier's toolchain, forwarder

Each driver seeds a host folder this way; ``docker`` then copies it into the container.

Source paths (``TemplateDir.path``, ``StarterFile.source``) are absolute: the task loader resolved them.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from coder_eval.errors import SandboxError
from coder_eval.file_kinds import is_special
from coder_eval.sandbox.base import inside
from coder_eval.sandbox.layout import interpreter_bin
from coder_eval.sandbox.network import FORWARDER
from coder_eval.sandbox.provision import Provision, Shown
from coder_eval.sandbox.recording import client_script
from coder_eval.sandbox.snapshot import Bounds, Dropped, extract_tar
from coder_eval.sandbox.spec import (
    CliRecorder,
    RepoSource,
    StarterFile,
    StarterFiles,
    TemplateDir,
    TemplateSource,
)
from coder_eval.sandbox.toolchain import EMPTY_PYTEST_CONFIG, install_toolchain
from coder_eval.sandbox.trees import remove_tree, walk

GIT_TIMEOUT_S = 600.0


def seed_workspace(work: Path, provision: Provision) -> tuple[list[Dropped], list[Path]]:
    """Fill ``work`` as ``provision`` says: the snapshot, the hidden tests over it, the templates;
    returns what the snapshot dropped and the mock PATH folders (host paths, files made executable)."""
    snapshot, bounds = provision.snapshot, Bounds.of(provision.limits)
    dropped = extract_tar(snapshot, work, bounds) if snapshot is not None else []
    if provision.role == "verifier":
        drop_caches(work)
    if provision.hidden is not None and not provision.hidden[1].startswith("/"):
        replace_with(work, provision.hidden[1], provision.hidden[0])
    for source in provision.sources:
        apply_template(source, work)
    return dropped, prepare_mock_dirs(provision.path_dirs, work)


CACHE_FOLDERS = frozenset({"__pycache__", ".pytest_cache"})
"""Folders of caches the verifier never restores (nor anything in them)."""
CACHE_SUFFIXES = (".pyc", ".pyo")


def drop_caches(work: Path) -> None:
    """Remove every bytecode cache and pytest cache from a restored workspace: the verifier's Python
    and pytest must never load bytecode the agent wrote (a ``.pyc`` whose header matches an unchanged
    source, or pytest's assertion-rewrite cache, whose source hash the agent can compute)."""
    for parent, dirnames, filenames in walk(work):
        folder = Path(parent)
        for name in [d for d in dirnames if d in CACHE_FOLDERS]:
            dirnames.remove(name)
            _remove(folder / name)
        for name in filenames:
            if name.endswith(CACHE_SUFFIXES) or name in CACHE_FOLDERS:
                _remove(folder / name)


def _remove(path: Path) -> None:
    """Remove a file, link or folder, in a folder the agent may have made read-only."""
    path.parent.chmod(path.parent.lstat().st_mode | stat.S_IWUSR | stat.S_IXUSR)
    if path.is_dir() and not path.is_symlink():
        remove_tree(path)
    else:
        path.unlink()


def install_recorders(folder: Path, recorders: Iterable[CliRecorder], socket: str, work: Path) -> None:
    """The recorded CLIs' clients in ``folder`` (talking to ``socket``, as commands see it); a
    recorder's target in the workspace is made executable."""
    python = str(interpreter_bin() / "python")
    for recorder in recorders:
        script = folder / recorder.name
        script.write_text(client_script(python, recorder.name, socket), encoding="utf-8")
        script.chmod(0o755)
        if recorder.target is not None and (work / recorder.target).is_file():
            make_executable(work / recorder.target)


def install_tools(folder: Path, provision: Provision) -> None:
    """The harness's files in ``folder`` (read-only inside): the verifier's toolchain and its pytest
    configuration, the model forwarder."""
    if provision.trusted:
        install_toolchain(folder)
        name, content = provision.pytest_config or EMPTY_PYTEST_CONFIG
        (folder / "pytest-config").mkdir()
        (folder / "pytest-config" / name).write_bytes(content)
    if provision.network == "model" and provision.model_port is not None:
        (folder / "forward.py").write_text(FORWARDER, encoding="utf-8")


def replace_with(work: Path, mount_point: str, source: Path) -> None:
    """Put a copy of ``source`` at ``mount_point``, removing whatever the agent left there first: a
    link, a file or a pipe where one of its folders goes too, so it is never reached through a link."""
    *folders, name = PurePosixPath(mount_point).parts
    parent = work
    for part in folders:
        parent = parent / part
        if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
            parent.unlink()
        parent.mkdir(exist_ok=True)
    target = parent / name
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        target.unlink()
    elif target.is_dir():
        remove_tree(target)
    shutil.copytree(source, target, ignore=special_entries)


def stage_shown(shown: Iterable[Shown], place: Callable[[str], Path]) -> None:
    """Stage each folder shown at a fixed path at ``place(target)`` on the host: a copy of its
    source (a folder's contents, or a file under its own name, modes kept), or an empty folder."""
    for folder in shown:
        target = place(folder.target)
        target.mkdir(parents=True, exist_ok=True)
        source = folder.source
        if source is None:
            continue
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True, ignore=special_entries)
        elif source.is_file():
            shutil.copy2(source, target / source.name)
        else:
            raise SandboxError(f"{source} (to be shown at {folder.target}) is not a file or folder")


def apply_template(source: TemplateSource, root: Path) -> None:
    """Apply one ``template_sources`` entry to the workspace ``root``.

    Example: ``TemplateDir(path="/t/app", files=["src", "README.md"])`` copies ``/t/app/src`` and
    ``/t/app/README.md`` to ``<root>/src`` and ``<root>/README.md``.
    """
    target = inside(root, source.mount_point)
    if isinstance(source, RepoSource):
        _clone(source, target)
    elif isinstance(source, StarterFiles):
        for starter in source.files:
            write_starter(starter, target)
    elif isinstance(source, TemplateDir):
        _copy_template(source, target)


def _copy_template(source: TemplateDir, target: Path) -> None:
    picked = [entry for entry in source.files if isinstance(entry, str)]
    template = Path(source.path)
    for relative in picked or ["."]:
        _copy(inside(template, relative), inside(target, relative) if relative != "." else target)
    for entry in source.files:
        if isinstance(entry, StarterFile):
            write_starter(entry, target)


def write_starter(starter: StarterFile, base: Path) -> None:
    """Write one starter file (inline ``content`` or a copy of ``source``), chmod +x if asked."""
    path = inside(base, starter.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if starter.content is not None:
        path.write_text(starter.content, encoding="utf-8")
    elif starter.source is not None:
        shutil.copyfile(starter.source, path)
    if starter.executable:
        make_executable(path)


def _clone(source: RepoSource, target: Path) -> None:
    """``git clone`` then ``git checkout <commit>``; a failure names the URL and git's message."""
    if target.exists() and any(target.iterdir()):
        raise SandboxError(f"template_sources: repo target {target} is not empty; a repo source comes first")
    commands = [["git", "clone", "--quiet", source.url, str(target)]]
    if source.commit:
        commands.append(["git", "-C", str(target), "checkout", "--quiet", "--detach", source.commit])
    for command in commands:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxError(f"template_sources: cannot clone {source.url}: {exc}") from exc
        if done.returncode != 0:
            raise SandboxError(
                f"template_sources: {' '.join(command[:3])} failed for {source.url}: {done.stderr.strip()}"
            )


def prepare_mock_dirs(relative_dirs: Iterable[str], root: Path) -> list[Path]:
    """Absolute paths of the mock PATH directories, with every file in them made executable."""
    dirs = []
    for relative in relative_dirs:
        directory = inside(root, relative)
        if not directory.is_dir():
            raise SandboxError(
                f"sandbox.mock_path_dirs: {relative!r} is not a directory in the sandbox after "
                "template_sources were applied; add it to a template or fix the path"
            )
        for parent, _, filenames in walk(directory):
            for name in filenames:
                if (path := Path(parent) / name).is_file():
                    make_executable(path)
        dirs.append(directory)
    return dirs


def make_executable(path: Path) -> None:
    """``chmod +x`` (user, group and other)."""
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _copy(source: Path, destination: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, destination, symlinks=True, dirs_exist_ok=True, ignore=special_entries)
        return
    if not source.exists():
        raise SandboxError(f"sandbox.template_sources: {source} not found in the template directory")
    if is_special(source.lstat().st_mode):
        return  # a FIFO, a socket, a device: never opened (plan warns about it)
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, destination, follow_symlinks=False)


def special_entries(folder: str, names: list[str]) -> set[str]:
    """For ``shutil.copytree``: the FIFOs, sockets and devices in ``folder``, left out unopened
    (reading a FIFO blocks; a device may never end)."""
    left_out = set()
    for name in names:
        try:
            mode = (Path(folder) / name).lstat().st_mode
        except OSError:
            continue
        if is_special(mode):
            left_out.add(name)
    return left_out
