"""The container engine, through the ``docker`` CLI: one call at a time, each awaited.

Example::

    problem = await engine_problem()            # None where a docker daemon answers
    done = await docker("image", "inspect", "coder-eval/base")
    done.code, done.out, done.err                # 0, b'[...]', ''

The CLI talks to whatever daemon ``DOCKER_HOST`` (or the user's docker context) names; every call
carries the harness's own docker configuration, never a sandbox's environment. The daemon must run
on this machine: a sandbox reaches the harness through Unix sockets bound into its container.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from coder_eval.errors import SandboxError
from coder_eval.sandbox.snapshot import Bounds, retar

CALL_TIMEOUT_S = 120.0
"""How long one engine call (create, copy, inspect ...) may take before it is a sandbox fault."""

_problems: dict[str, str | None] = {}


@dataclass(frozen=True)
class Call:
    """What one ``docker`` command returned."""

    code: int
    out: bytes
    err: str


def docker_path() -> str | None:
    """The ``docker`` CLI on PATH, or None."""
    return shutil.which("docker")


def client_env() -> dict[str, str]:
    """The environment of every ``docker`` CLI call: where its configuration and daemon are.

    Example: ``{"PATH": "/usr/bin:/bin", "DOCKER_CONFIG": "/root/.docker"}`` (plus ``DOCKER_HOST``,
    ``DOCKER_CONTEXT`` or ``DOCKER_CERT_PATH`` when the harness has them).
    """
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    env["DOCKER_CONFIG"] = os.environ.get("DOCKER_CONFIG") or str(Path.home() / ".docker")
    for name in ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def cli() -> list[str]:
    """The start of every docker command line (the binary; ``SandboxError`` when missing)."""
    found = docker_path()
    if found is None:
        raise SandboxError("docker is not installed; install it with 'apt-get install docker.io'")
    return [found]


async def docker(
    *args: str,
    stdin: bytes | None = None,
    timeout: float = CALL_TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> Call:
    """Run ``docker <args>`` and wait for it; a timeout kills it and raises ``SandboxError``."""
    proc = await asyncio.create_subprocess_exec(
        *cli(),
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**client_env(), **(env or {})},
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
    except BaseException as exc:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await asyncio.shield(proc.wait())
        if isinstance(exc, TimeoutError):
            raise SandboxError(f"docker {args[0]} did not finish within {timeout:g} s") from exc
        raise
    return Call(proc.returncode or 0, out, err.decode("utf-8", errors="replace").strip())


async def must(*args: str, stdin: bytes | None = None, timeout: float = CALL_TIMEOUT_S) -> Call:
    """``docker(...)`` that raises ``SandboxError`` with the engine's message on a non-zero exit."""
    done = await docker(*args, stdin=stdin, timeout=timeout)
    if done.code != 0:
        raise SandboxError(f"docker {' '.join(args[:2])} failed: {done.err or f'exit code {done.code}'}")
    return done


async def engine_problem() -> str | None:
    """Why no docker daemon can be used here, or None when one answers (probed once per process).

    Example: ``await engine_problem()`` -> ``"docker is not installed; install it with ..."``.
    """
    path = docker_path()
    if path is None:
        return "docker is not installed; install it with 'apt-get install docker.io'"
    if path not in _problems:
        try:
            done = await docker("version", "--format", "{{.Server.Version}}", timeout=20)
        except (SandboxError, OSError) as exc:
            _problems[path] = f"the docker daemon does not answer: {exc}"
        else:
            _problems[path] = None if done.code == 0 else _daemon_problem(done.err)
    return _problems[path]


def _daemon_problem(err: str) -> str:
    why = err.splitlines()[-1] if err else "no answer"
    return f"no docker daemon answers ({why}); start one with 'bash scripts/dockerd.sh start'"


def forget_probe() -> None:
    """Probe the engine again next time (after starting or stopping a daemon)."""
    _problems.clear()


def copy_out(
    container: str, folder: str, out: IO[bytes], ignore: Sequence[str], bounds: Bounds | None = None
) -> None:
    """``docker cp container:folder -`` rewritten to ``out`` as a workspace snapshot (``retar``); it
    works on a stopped container too. Past ``bounds`` the copy is stopped (``WorkspaceTooLarge``)."""
    argv = [*cli(), "cp", f"{container}:{folder}", "-"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=client_env()) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            retar(proc.stdout, out, ignore=ignore, bounds=bounds)
        except BaseException:
            proc.kill()  # it may be writing gigabytes nobody will read
            raise
        finally:
            err = proc.stderr.read().decode(errors="replace").strip()
            proc.wait()
    if proc.returncode != 0:
        raise SandboxError(f"cannot snapshot the workspace of {container}: {err}")
