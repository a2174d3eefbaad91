"""Package environments for ``sandbox.python`` and ``sandbox.node``: built once, copied per sandbox.

Example::

    envs = package_envs()                                   # one cache per process (per run)
    template = await envs.python(PackageEnv(env_packages=["requests==2.32.3"]))
    clone_env(template, layout.env)                          # a private, writable copy

Installing packages takes seconds; an episode must not pay it. Each distinct environment (keyed
by its kind, its sorted package list and the interpreter) is built once, by the harness, into a
cache folder the sandboxes never see, and every sandbox gets its own tree of it, rewritten for its
new place. The agent may change its environment (install more, edit a file), and that must not
reach the next episode or the verifier, which gets a tree of its own. So the tree's files are
either copies, or — where the sandbox cannot write a file it does not own — hard links to the
cache's files, which the harness (as root) gave to an unmapped user and made read-only: bwrap's
commands run without capabilities, so they can replace such a file in their own tree but never
write through it. Linking costs about 0.03 s for a thousand files where copying costs a second.

A Python environment is a virtualenv of the interpreter coder_eval runs on, without pip, with the
packages installed by the harness's pip (``pip --python``). A Node environment is a
``node_modules`` folder from ``npm install``; a sandbox gets it beside its workspace, where Node's
module resolution finds it from any file in the workspace, and its ``.bin`` first on PATH.

A build that fails (an unknown package, no registry) fails every episode that needs it with the
installer's output, marked as the harness's failure, not the agent's.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Literal

from coder_eval.errors import SandboxError
from coder_eval.sandbox.spec import PackageEnv

EnvKind = Literal["python", "node"]
BUILD_TIMEOUT = 900.0
"""Seconds an install may take (a large dependency tree from a slow registry)."""


class PackageEnvs:
    """Environments built by this process, by key (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._built: dict[str, Path | SandboxError] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def python(self, spec: PackageEnv) -> Path:
        """The folder of a virtualenv with ``spec``'s packages (built on first call)."""
        return await self._get("python", spec)

    async def node(self, spec: PackageEnv) -> Path:
        """The ``node_modules`` folder with ``spec``'s packages (built on first call)."""
        return await self._get("node", spec)

    async def _get(self, kind: EnvKind, spec: PackageEnv) -> Path:
        key = env_key(kind, spec.env_packages)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key not in self._built:
                try:
                    self._built[key] = await self._build(kind, spec.env_packages, self.root / key)
                except SandboxError as exc:
                    self._built[key] = exc
            built = self._built[key]
        if isinstance(built, SandboxError):
            raise built
        return built

    async def _build(self, kind: EnvKind, packages: list[str], folder: Path) -> Path:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        if kind == "python":
            env = folder / "env"
            await _run([base_python(), "-m", "venv", "--without-pip", str(env)], f"{kind} environment")
            if packages:
                pip = [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install"]
                quiet = ["--no-input", "--disable-pip-version-check", "--no-warn-script-location", "-q"]
                await _run([*pip, *quiet, *packages], f"sandbox.python packages {packages}")
            protect(env)
            return env
        npm = shutil.which("npm")
        if npm is None:
            raise SandboxError("sandbox.node needs npm on the host's PATH (Debian: apt-get install npm)")
        (folder / "package.json").write_text(json.dumps({"private": True}), encoding="utf-8")
        (folder / "node_modules").mkdir()
        if packages:
            flags = ["--no-audit", "--no-fund", "--no-save", "--no-package-lock", "--loglevel=error"]
            await _run(
                [npm, "install", "--prefix", str(folder), *flags, *packages], f"sandbox.node {packages}"
            )
        protect(folder / "node_modules")
        return folder / "node_modules"


async def sandbox_envs(python: PackageEnv | None, node: PackageEnv | None) -> tuple[Path | None, Path | None]:
    """The built environments a sandbox spec asks for: (virtualenv, node_modules), None where unset
    (the cache folder is made only when one is asked for)."""
    return (
        await package_envs().python(python) if python is not None else None,
        await package_envs().node(node) if node is not None else None,
    )


def env_key(kind: EnvKind, packages: list[str]) -> str:
    """The cache key of an environment: its kind, its packages (any order) and the interpreter."""
    identity = [kind, sorted(packages), base_python() if kind == "python" else ""]
    return f"{kind}-{hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]}"


def base_python() -> str:
    """The interpreter a sandbox's virtualenv is made from: coder_eval's own, outside its virtualenv."""
    return str(getattr(sys, "_base_executable", None) or sys.executable)


async def _run(argv: list[str], what: str) -> None:
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
    except OSError as exc:
        raise SandboxError(f"cannot build the {what}: {exc}") from exc
    try:
        output, _ = await asyncio.wait_for(process.communicate(), BUILD_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise SandboxError(f"building the {what} took over {BUILD_TIMEOUT:.0f} s") from None
    if process.returncode != 0:
        tail = output.decode(errors="replace")[-2000:]
        raise SandboxError(f"cannot build the {what} (exit {process.returncode}):\n{tail}")


SHARED_OWNER = 65534
"""The user that owns a protected cache's files: ``nobody``, mapped to no user inside a sandbox."""


def protected() -> bool:
    """Whether the caches built here are protected (the harness runs as root and can give files away)."""
    return os.geteuid() == 0


def protect(folder: Path) -> None:
    """Give every file under ``folder`` to ``SHARED_OWNER``, read-only (when running as root)."""
    if not protected():
        return
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            os.chown(path, SHARED_OWNER, SHARED_OWNER)
            path.chmod(path.stat().st_mode & 0o555)


def clone_env(template: Path, dest: Path, *, link: bool = False, seen_as: Path | None = None) -> None:
    """Give ``dest`` its own tree of the environment at ``template``: copies, or with ``link`` hard
    links to the (protected) cache's files; the files that name the old place (script shebangs,
    ``activate``, ``pyvenv.cfg``) are rewritten as new files naming ``seen_as`` (where the sandbox's
    commands see ``dest``: a container path; default ``dest``). Symlinks are kept as links."""
    if link and protected():
        try:
            shutil.copytree(template, dest, symlinks=True, copy_function=os.link)
        except (OSError, shutil.Error):  # another file system: copy instead
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(template, dest, symlinks=True)
    else:
        shutil.copytree(template, dest, symlinks=True)
    old, new = str(template).encode(), str(seen_as or dest).encode()
    for folder in (dest / "bin", dest):
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            if path.is_file() and not path.is_symlink():
                _relocate(path, old, new)


def _relocate(path: Path, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` in a small text file (scripts, configs) as a new file of the
    sandbox's own (never through a link to the cache); binaries are left alone."""
    status = path.stat()
    if status.st_size > 1 << 20:
        return
    data = path.read_bytes()
    if old not in data or b"\0" in data[:1024]:
        return
    path.unlink()
    path.write_bytes(data.replace(old, new))
    path.chmod(status.st_mode | 0o200)


_ENVS: PackageEnvs | None = None


def package_envs() -> PackageEnvs:
    """This process's environment cache (a temporary folder, removed when the process exits)."""
    global _ENVS
    if _ENVS is None:
        root = Path(tempfile.mkdtemp(prefix="coder_eval-envs-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _ENVS = PackageEnvs(root)
    return _ENVS


def site_packages(env: Path) -> list[str]:
    """The package folder of the virtualenv at ``env`` (made from ``base_python``)."""
    return [str(env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages")]


def env_bin_dirs(python_env: Path | None, node_modules: Path | None) -> list[str]:
    """The folders an environment puts first on PATH (the virtualenv's, then Node's ``.bin``)."""
    dirs = [str(python_env / "bin")] if python_env is not None else []
    if node_modules is not None:
        dirs.append(str(node_modules / ".bin"))
    return dirs


__all__ = [
    "PackageEnvs",
    "base_python",
    "clone_env",
    "env_bin_dirs",
    "env_key",
    "package_envs",
    "sandbox_envs",
    "site_packages",
]
