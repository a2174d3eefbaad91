"""The docker driver's default image, built offline from Debian packages, once per machine.

Example::

    bash scripts/docker-base-image.sh                 # builds it (its recipe's tag) if missing
    bash scripts/docker-base-image.sh --from debian   # a clean bookworm from deb.debian.org
    await ensure_base_image()                          # what the driver does on first use

No registry is involved. Two recipes (``rootfs.py``), both ending in ``docker import``:

- ``host`` (the default where ``dpkg`` runs, a few seconds): the files of the Debian packages
  installed on this machine that the graders and agents use (bash, coreutils, Python, git, Node.js,
  ripgrep ...) and every package they depend on, without documentation. The image then has the
  host's own C library, so the harness's Python, bound read-only into each container, runs there.
- ``debian``: ``mmdebstrap --variant=minbase`` of Debian bookworm with the same packages (30-60 s, a
  download from the Debian mirror). Use it on a host that is not Debian, or for an image to ship.

A task can name any other local image (``sandbox.docker.image``) or a Dockerfile built from this one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from coder_eval.errors import SandboxError
from coder_eval.sandbox.docker.engine import cli, client_env
from coder_eval.sandbox.docker.rootfs import (
    ETC,
    GROUP,
    LEFT_OUT,
    OPTIONAL,
    PACKAGES,
    PASSWD,
    PATH,
    debian_rootfs,
    host_rootfs,
)

RECIPE_VERSION = 1
"""Raised when the way the image is made changes (the tag then changes, and it is built again)."""
RECIPE = hashlib.sha256(
    repr((RECIPE_VERSION, PACKAGES, OPTIONAL, LEFT_OUT, ETC, PASSWD, GROUP, PATH)).encode()
).hexdigest()[:12]
BASE_REPOSITORY = "coder-eval/base"
BASE_IMAGE = f"{BASE_REPOSITORY}:{RECIPE}"
"""The default image: the recipe's own tag; also tagged ``coder-eval/base:latest``, which a task's
Dockerfile names (``FROM coder-eval/base``)."""


def image_exists(tag: str) -> bool:
    """``docker image inspect`` succeeds for ``tag``."""
    argv = [*cli(), "image", "inspect", "--format", "{{.Id}}", tag]
    return subprocess.run(argv, capture_output=True, env=client_env(), check=False).returncode == 0


def import_rootfs(source: Path | None, tag: str, writer: object = None) -> None:
    """``docker import`` a root filesystem tar (a file, or what ``writer(stdin)`` streams) as ``tag``."""
    argv = [
        *cli(), "import", "--change", f"ENV PATH={PATH}", "--change", 'CMD ["/bin/bash"]',
        "--change", "ENV LANG=C.UTF-8", str(source) if source else "-", tag,
    ]  # fmt: skip
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(argv, env=client_env(), **pipes) as proc:  # type: ignore[call-overload]
        if writer is not None and proc.stdin is not None:
            try:
                writer(proc.stdin)  # type: ignore[operator]
            except BrokenPipeError:
                pass  # docker import gave up: its own message follows
            finally:
                with contextlib.suppress(BrokenPipeError):
                    proc.stdin.close()
        elif proc.stdin is not None:
            proc.stdin.close()
        err = proc.stderr.read() if proc.stderr is not None else b""
        proc.wait()
    if proc.returncode != 0:
        raise SandboxError(f"docker import failed: {err.decode(errors='replace').strip()}")


def build_base_image(recipe: str = "auto", tag: str = BASE_IMAGE) -> str:
    """Build the default image with ``recipe`` (``host``, ``debian`` or ``auto``); returns the recipe used.

    ``SandboxError`` says what is missing when it cannot be built here.
    """
    if recipe == "auto":
        recipe = "host" if shutil.which("dpkg-query") and shutil.which("apt-cache") else "debian"
    if recipe == "host":
        import_rootfs(None, tag, writer=host_rootfs)
    else:
        with tempfile.TemporaryDirectory(prefix="coder_eval-rootfs-") as scratch:
            target = Path(scratch) / "rootfs.tar"
            debian_rootfs(target)
            import_rootfs(target, tag)
    if tag == BASE_IMAGE:
        subprocess.run([*cli(), "tag", tag, f"{BASE_REPOSITORY}:latest"], env=client_env(), check=False)
    return recipe


_lock = asyncio.Lock()


_present: set[str] = set()


async def ensure_base_image(tag: str = BASE_IMAGE) -> None:
    """Build the default image when this machine has none yet (one build at a time; once found, it
    is not looked up again by this process)."""
    if tag in _present:
        return
    async with _lock:
        if tag not in _present and not await asyncio.to_thread(image_exists, tag):
            await asyncio.to_thread(_build_locked, tag)
        _present.add(tag)


def _build_locked(tag: str) -> None:
    """Build under a machine-wide lock, so parallel runs build once."""
    with (Path(tempfile.gettempdir()) / "coder_eval-base-image.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not image_exists(tag):
            try:
                build_base_image("auto", tag)
            except SandboxError as exc:
                raise SandboxError(
                    f"the default docker image {tag} is missing and cannot be built here ({exc}); build it "
                    "with 'bash scripts/docker-base-image.sh' or name an image in sandbox.docker.image"
                ) from exc


def main(argv: list[str] | None = None) -> int:
    """``scripts/docker-base-image.sh [--from host|debian|auto] [--force] [--tag T]``."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--from", dest="recipe", choices=("auto", "host", "debian"), default="auto")
    parser.add_argument("--force", action="store_true", help="rebuild even when the image exists")
    parser.add_argument("--tag", default=BASE_IMAGE)
    args = parser.parse_args(argv)
    try:
        if image_exists(args.tag) and not args.force:
            print(f"{args.tag} is already built")
            return 0
        started = time.monotonic()
        used = build_base_image(args.recipe, args.tag)
    except SandboxError as exc:
        print(f"cannot build {args.tag}: {exc}", file=sys.stderr)
        return 1
    print(f"built {args.tag} from the {used} recipe in {time.monotonic() - started:.1f} s")
    return 0
