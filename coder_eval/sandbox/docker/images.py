"""The image a docker sandbox starts from: the default one, a local one by name, or a task's Dockerfile.

Example::

    tag = await image_for(image=None, dockerfile=None)                 # "coder-eval/base:3e01b20433e8"
    tag = await image_for(image=None, dockerfile=Path("env/Dockerfile"), args={"V": "2"})
    # "coder-eval/task:3f2a9c1d0b7e4a55", built once, then found by the hash of its inputs

Nothing is ever pulled. A named image must already be on this machine (``docker load``, ``docker
build``). A Dockerfile is built with the legacy builder and no network (``FROM coder-eval/base``
works; a remote base, ``--pull`` or a ``# syntax=`` line does not), tagged with a hash of the
Dockerfile, every file of its folder (the build context), the build arguments and extra options
(and the default image's recipe, which a Dockerfile usually starts from: ``FROM coder-eval/base``),
so the same inputs build once per machine, and a changed file builds again.

:func:`image_problem` says, before anything runs, what a task's environment needs that is not here
(a named image, or an image its Dockerfile starts ``FROM``), and how to get it: ``plan`` and ``run``
refuse such a task (exit 2) rather than fail every episode, or run it in another environment.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, NamedTuple

from coder_eval.errors import SandboxError
from coder_eval.sandbox.docker.base_image import BASE_IMAGE, BASE_REPOSITORY, ensure_base_image
from coder_eval.sandbox.docker.dockerfile import read_dockerfile
from coder_eval.sandbox.docker.engine import cli, client_env, docker, engine_problem

BUILD_TIMEOUT_S = 1800.0
TASK_REPOSITORY = "coder-eval/task"

_locks: dict[str, asyncio.Lock] = {}


async def image_for(
    *,
    image: str | None,
    dockerfile: Path | None,
    args: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> str:
    """The tag of the image to start containers from (see the module docstring); ``exclude`` names
    paths of the build context the build never sees (a task's hidden tests and solution)."""
    if image is not None:
        await _must_exist(image)
        return image
    await ensure_base_image()
    if dockerfile is None:
        return BASE_IMAGE
    tag = f"{TASK_REPOSITORY}:{build_hash(dockerfile, args or {}, extra_args, exclude)[:16]}"
    lock = _locks.setdefault(tag, asyncio.Lock())
    async with lock:
        if not await _exists(tag):
            build = Build(tag, dockerfile, dict(args or {}), list(extra_args), tuple(exclude))
            await asyncio.to_thread(_build_locked, build)
    return tag


def build_hash(
    dockerfile: Path, args: Mapping[str, str], extra_args: Sequence[str], exclude: Sequence[str] = ()
) -> str:
    """sha256 of what a build depends on: the default image's recipe, the Dockerfile, each context
    file's path and content (but those ``exclude`` leaves out), the arguments. Example: the same
    folder and arguments -> the same hash."""
    digest = hashlib.sha256(f"base\0{BASE_IMAGE}".encode())  # a rebuilt default image rebuilds on it
    context = dockerfile.parent
    digest.update(b"\0dockerfile\0" + dockerfile.read_bytes())
    for path in context_files(context, exclude):
        digest.update(b"\0file\0" + path.relative_to(context).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    if exclude:
        digest.update(("\0exclude\0" + "\0".join(sorted(exclude))).encode())
    for key in sorted(args):
        digest.update(f"\0arg\0{key}={args[key]}".encode())
    digest.update(("\0extra\0" + "\0".join(extra_args)).encode())
    return digest.hexdigest()


_present: set[str] = set()


async def image_problem(
    *,
    image: str | None,
    dockerfile: Path | None,
    args: Mapping[str, str] | None = None,
    exclude: Sequence[str] = (),
) -> str | None:
    """What a docker environment needs that is not on this machine, with what to do; None when a
    container can start from it here. The default image (``coder-eval/base``) is built when needed.

    Example: ``await image_problem(image=None, dockerfile=Path("env/Dockerfile"))`` ->
    ``"env/Dockerfile starts FROM 'ubuntu:24.04', which is not on this machine ..."``.
    """
    engine = await engine_problem()
    if engine is not None:
        return f"it runs in a docker container, and {engine}"
    if image is not None:
        return None if await _exists(image) else _not_here(f"the image {image!r}", image)
    if dockerfile is None or await _exists(
        f"{TASK_REPOSITORY}:{build_hash(dockerfile, args or {}, (), exclude)[:16]}"
    ):
        return None  # built here already (with no extra build options)
    for base in read_dockerfile(dockerfile, args).bases:
        if base.split(":", 1)[0] != BASE_REPOSITORY and not await _exists(base):
            what = f"{dockerfile} starts FROM {base!r}"
            return _not_here(what, base) + f", or change FROM to {BASE_REPOSITORY} (made from this machine)"
    return None


def _not_here(what: str, image: str) -> str:
    return (
        f"{what}, which is not on this machine, and coder_eval never pulls an image: build or load it "
        f"first ('docker load -i {image.rsplit('/', 1)[-1].replace(':', '_')}.tar', or "
        f"'docker build -t {image} <folder>')"
    )


async def _exists(tag: str) -> bool:
    """The image is on this machine (once found, not looked up again by this process)."""
    if tag not in _present and (await docker("image", "inspect", "--format", "{{.Id}}", tag)).code == 0:
        _present.add(tag)
    return tag in _present


async def _must_exist(image: str) -> None:
    if not await _exists(image):
        raise SandboxError(
            f"sandbox.docker.image {image!r} is not on this machine, and coder_eval never pulls: load it "
            "('docker load') or build it first, or give sandbox.docker.dockerfile_path instead"
        )


def context_files(context: Path, exclude: Sequence[str] = ()) -> list[Path]:
    """The regular files of a build context, sorted, without those under an ``exclude`` path."""
    left_out = [e.strip("/").removeprefix("./") for e in exclude]
    files = [p for p in context.rglob("*") if p.is_file() and not p.is_symlink()]
    return sorted(
        p
        for p in files
        if not any((r := p.relative_to(context).as_posix()) == e or r.startswith(e + "/") for e in left_out)
    )


class Build(NamedTuple):
    """One image to build: its tag, Dockerfile (its folder the context), arguments, left-out paths."""

    tag: str
    dockerfile: Path
    args: dict[str, str]
    extra_args: list[str]
    exclude: tuple[str, ...]


def _build_locked(build: Build) -> None:
    """Build under a machine-wide lock per tag, so parallel runs build each image once. With paths
    to leave out, the context is sent as a tar of the rest (``docker build -``)."""
    tag, dockerfile = build.tag, build.dockerfile
    lock_path = Path(tempfile.gettempdir()) / f"coder_eval-build-{tag.rsplit(':', 1)[-1]}.lock"
    with lock_path.open("w") as lock, tempfile.TemporaryFile() as context:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _sync(["image", "inspect", "--format", "{{.Id}}", tag]).returncode == 0:
            return
        build_args = [
            a for key, value in sorted(build.args.items()) for a in ("--build-arg", f"{key}={value}")
        ]
        source = str(dockerfile.parent)
        if build.exclude:
            _tar_context(dockerfile, build.exclude, context)
            source = "-"
        done = _sync(
            ["build", "--network", "none", "--rm", "--force-rm", "-q",
             "-f", dockerfile.name if build.exclude else str(dockerfile), "-t", tag,
             *build_args, *build.extra_args, source],
            env={"DOCKER_BUILDKIT": "0"}, stdin=context if build.exclude else None,
        )  # fmt: skip
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise SandboxError(
            f"sandbox.docker.dockerfile_path: building {dockerfile} failed (the build has no network "
            f"and never pulls; base it on {BASE_IMAGE} or another local image):\n{tail}"
        )


def _tar_context(dockerfile: Path, exclude: Sequence[str], out: IO[bytes]) -> None:
    """The build context without ``exclude``'s paths, as a tar in ``out`` (rewound). The Dockerfile
    comes first, in GNU format: the engine's client takes stdin for an archive only when its first
    512 bytes are a whole header (a PAX or long-name record first would make it a Dockerfile)."""
    folder = dockerfile.parent
    files = [p for p in context_files(folder, exclude) if p != dockerfile]
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for path in [dockerfile, *files]:
            tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    out.seek(0)


def _sync(
    args: list[str], env: dict[str, str] | None = None, stdin: IO[bytes] | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*cli(), *args], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
            env={**client_env(), **(env or {})}, check=False, stdin=stdin,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"docker {args[0]} did not finish within {BUILD_TIMEOUT_S:g} s") from exc
