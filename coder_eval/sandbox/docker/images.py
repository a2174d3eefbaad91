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
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

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
) -> str:
    """The tag of the image to start containers from (see the module docstring)."""
    if image is not None:
        await _must_exist(image)
        return image
    await ensure_base_image()
    if dockerfile is None:
        return BASE_IMAGE
    tag = f"{TASK_REPOSITORY}:{build_hash(dockerfile, args or {}, extra_args)[:16]}"
    lock = _locks.setdefault(tag, asyncio.Lock())
    async with lock:
        if not await _exists(tag):
            await asyncio.to_thread(_build_locked, tag, dockerfile, dict(args or {}), list(extra_args))
    return tag


def build_hash(dockerfile: Path, args: Mapping[str, str], extra_args: Sequence[str]) -> str:
    """sha256 of what a build depends on: the default image's recipe, the Dockerfile, each context
    file's path and content, the arguments. Example: the same folder and arguments -> the same hash."""
    digest = hashlib.sha256(f"base\0{BASE_IMAGE}".encode())  # a rebuilt default image rebuilds on it
    context = dockerfile.parent
    digest.update(b"\0dockerfile\0" + dockerfile.read_bytes())
    for path in sorted(p for p in context.rglob("*") if p.is_file() and not p.is_symlink()):
        digest.update(b"\0file\0" + path.relative_to(context).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    for key in sorted(args):
        digest.update(f"\0arg\0{key}={args[key]}".encode())
    digest.update(("\0extra\0" + "\0".join(extra_args)).encode())
    return digest.hexdigest()


_present: set[str] = set()


async def image_problem(
    *, image: str | None, dockerfile: Path | None, args: Mapping[str, str] | None = None
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
        f"{TASK_REPOSITORY}:{build_hash(dockerfile, args or {}, ())[:16]}"
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


def _build_locked(tag: str, dockerfile: Path, args: dict[str, str], extra_args: list[str]) -> None:
    """Build under a machine-wide lock per tag, so parallel runs build each image once."""
    lock_path = Path(tempfile.gettempdir()) / f"coder_eval-build-{tag.rsplit(':', 1)[-1]}.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _sync(["image", "inspect", "--format", "{{.Id}}", tag]).returncode == 0:
            return
        build_args = [arg for key, value in sorted(args.items()) for arg in ("--build-arg", f"{key}={value}")]
        done = _sync(
            ["build", "--network", "none", "--rm", "--force-rm", "-q", "-f", str(dockerfile), "-t", tag,
             *build_args, *extra_args, str(dockerfile.parent)],
            env={"DOCKER_BUILDKIT": "0"},
        )  # fmt: skip
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise SandboxError(
            f"sandbox.docker.dockerfile_path: building {dockerfile} failed (the build has no network "
            f"and never pulls; base it on {BASE_IMAGE} or another local image):\n{tail}"
        )


def _sync(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*cli(), *args], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
            env={**client_env(), **(env or {})}, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"docker {args[0]} did not finish within {BUILD_TIMEOUT_S:g} s") from exc
