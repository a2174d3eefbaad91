"""A root filesystem made of Debian packages, as a tar stream: the default docker image's contents.

Example::

    with open("rootfs.tar", "wb") as out:
        host_rootfs(out)                  # this machine's installed packages (seconds, no download)
    debian_rootfs(Path("rootfs.tar"))     # mmdebstrap: a clean Debian bookworm (about a minute)

``host_rootfs`` takes the files of the packages in :data:`PACKAGES` and :data:`OPTIONAL` that are
installed here, and of every package they depend on, without documentation, stored on this
machine's real layout (on a merged-/usr system ``/bin`` is the same link into ``/usr``), plus the
few files no package lists (``update-alternatives`` links, the loader's cache, a minimal
``/etc/passwd``).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from coder_eval.errors import SandboxError

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
