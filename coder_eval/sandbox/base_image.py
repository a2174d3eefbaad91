"""The docker driver's default image, built offline from Debian packages, once per machine.

Example::

    bash scripts/docker-base-image.sh                 # builds coder-eval/base (its recipe's tag) if missing
    bash scripts/docker-base-image.sh --from debian   # a clean bookworm from deb.debian.org
    await ensure_base_image()                          # what the driver does on first use

No registry is involved. Two recipes, both ending in ``docker import``:

- ``host`` (the default where ``dpkg`` runs, about 3 s): the files of the Debian packages installed on
  this machine that the graders and agents use (bash, coreutils, Python, git, Node.js, ripgrep ...)
  and every package they depend on, without documentation. The image then has the host's own C
  library, so the harness's Python, bound read-only into each container, runs there.
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
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from coder_eval.errors import SandboxError
from coder_eval.sandbox.engine import cli, client_env

PACKAGES = (
    "bash",
    "coreutils",
    "dash",
    "libc-bin",
    "grep",
    "sed",
    "mawk",
    "findutils",
    "diffutils",
    "gzip",
    "tar",
)
"""Always in the image."""
OPTIONAL = ("python3", "git", "nodejs", "ripgrep", "procps", "util-linux", "ca-certificates", "patch", "make")
"""In the image when installed on the host (``host``) or available (``debian``)."""
LEFT_OUT = ("/usr/share/doc/", "/usr/share/man/", "/usr/share/info/", "/usr/share/locale/", "/usr/include/")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MERGED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level folders that are links into ``/usr`` on a merged-/usr system."""
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "ssl", "gitconfig")
"""``/etc`` entries copied from the host that no package lists (made by maintainer scripts)."""
PASSWD = "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"
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


def installed_closure(names: Iterable[str]) -> list[str]:
    """``names`` (those installed) and every installed package they depend on, recursively.

    Example: ``installed_closure(["bash"])`` -> ``["base-files", "bash", "debianutils", "libc6", ...]``.
    """
    wanted = [name for name in names if _installed(name)]
    done = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--installed", "--no-recommends", "--no-suggests",
         "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *wanted],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SandboxError(f"apt-cache depends failed: {done.stderr.strip()}")
    found = {line.strip() for line in done.stdout.splitlines() if line and not line.startswith((" ", "<"))}
    return sorted(found)


def _installed(name: str) -> bool:
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${db:Status-Status}", name], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() == "installed"


def package_paths(packages: Iterable[str]) -> list[str]:
    """Every path the packages installed, on this machine's real layout, documentation left out.

    On a merged-/usr system ``/bin/bash`` is stored as ``usr/bin/bash``, so the image's ``/bin`` can be
    the same link into ``/usr`` as the host's.
    """
    listed = subprocess.run(["dpkg-query", "-L", *packages], capture_output=True, text=True, check=False)
    paths = set()
    for line in listed.stdout.splitlines():
        if not line.startswith("/") or line.startswith(LEFT_OUT) or line in LEFT_OUT:
            continue
        path = Path(line)
        real = path.parent.resolve() / path.name if path.parent != path else path
        paths.add(str(real))
    return sorted(paths)


def host_rootfs(out: io.BufferedIOBase | object) -> int:
    """Write the ``host`` recipe's root filesystem as a tar stream to ``out``; returns its member count."""
    packages = installed_closure([*PACKAGES, *OPTIONAL])
    missing = [name for name in PACKAGES if name not in packages]
    if missing:
        raise SandboxError(f"the host lacks the Debian packages {missing}; use '--from debian'")
    paths = package_paths(packages)
    made = {"etc/passwd", "etc/group"}
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
        for name in MERGED:
            link = Path("/") / name
            if link.is_symlink():
                _add_link(tar, name, str(link.readlink()))
                made.add(name)
        for folder, mode in (("tmp", 0o1777), ("root", 0o700), ("home", 0o755), ("etc", 0o755)):
            _add_dir(tar, folder, mode)
            made.add(folder)
        for path in dict.fromkeys([*paths, *_etc_extras(), *_alternatives(set(paths))]):
            if path.strip("/") and path.lstrip("/") not in made:
                made.add(path.lstrip("/"))
                _add_path(tar, path)
        _add_text(tar, "etc/passwd", PASSWD)
        _add_text(tar, "etc/group", GROUP)
    return len(made)


def _etc_extras() -> Iterator[str]:
    for name in ETC:
        root = Path("/etc") / name
        if root.is_dir() and not root.is_symlink():
            yield str(root)
            yield from (str(p) for p in sorted(root.rglob("*")))
        elif root.exists() or root.is_symlink():
            yield str(root)


def _alternatives(paths: set[str]) -> Iterator[str]:
    """The ``update-alternatives`` links (``/usr/bin/awk`` -> ``/etc/alternatives/awk`` -> ``mawk``) of
    programs in the image: no package lists them."""
    for folder in (Path("/usr/bin"), Path("/usr/sbin")):
        for link in sorted(folder.iterdir()):
            if not link.is_symlink() or not str(link.readlink()).startswith("/etc/alternatives/"):
                continue
            choice = Path(link.readlink())
            if choice.is_symlink() and str(choice.readlink()) in paths:
                yield str(choice)
                yield str(link)


def _add_path(tar: tarfile.TarFile, path: str) -> int:
    try:
        info = tar.gettarinfo(path, arcname=path.lstrip("/"))
    except OSError:
        return 0
    if not (info.isfile() or info.isdir() or info.issym() or info.islnk()):
        return 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if info.isfile():
        with Path(path).open("rb") as handle:
            tar.addfile(info, handle)
    else:
        tar.addfile(info)
    return 1


def _add_link(tar: tarfile.TarFile, name: str, target: str) -> int:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o777
    tar.addfile(info)
    return 1


def _add_dir(tar: tarfile.TarFile, name: str, mode: int) -> int:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, mode, int(time.time())
    tar.addfile(info)
    return 1


def _add_text(tar: tarfile.TarFile, name: str, text: str) -> int:
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
    tar.addfile(info, io.BytesIO(data))
    return 1


def debian_rootfs(
    target: Path, suite: str = "bookworm", mirror: str = "http://deb.debian.org/debian"
) -> None:
    """The ``debian`` recipe: ``mmdebstrap`` writes a minbase root filesystem tar to ``target``."""
    mmdebstrap = shutil.which("mmdebstrap")
    if mmdebstrap is None:
        raise SandboxError("mmdebstrap is not installed; install it with 'apt-get install mmdebstrap'")
    include = ",".join([*PACKAGES, *OPTIONAL])
    excludes = [f"--dpkgopt=path-exclude={prefix}*" for prefix in LEFT_OUT]
    done = subprocess.run(
        [mmdebstrap, "--variant=minbase", f"--include={include}", *excludes, suite, str(target), mirror],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SandboxError(f"mmdebstrap failed: {done.stderr.strip()[-2000:]}")


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
