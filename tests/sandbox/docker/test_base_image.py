"""The default docker image: built from this machine's Debian packages, or a clear reason why not."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from coder_eval.sandbox.docker.base_image import build_base_image, main
from coder_eval.sandbox.docker.rootfs import installed_closure, package_paths

needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian system")


@needs_dpkg
def test_the_closure_holds_what_the_packages_need() -> None:
    closure = installed_closure(["bash", "coreutils", "not-a-package-anywhere"])

    assert {"bash", "coreutils", "libc6"} <= set(closure) and "not-a-package-anywhere" not in closure
    paths = package_paths(["bash"])
    assert "/usr/bin/bash" in paths and not any(p.startswith("/usr/share/doc/") for p in paths)


@pytest.mark.docker
@pytest.mark.slow
@needs_dpkg
def test_the_host_recipe_builds_an_image_graders_can_use() -> None:
    tag = "coder-eval/base-test:throwaway"
    probe = (
        "LC_ALL=C.UTF-8 awk 'BEGIN {print 1}' && readlink /bin && grep -c ^root: /etc/passwd && ls -d /tmp"
    )
    try:
        assert build_base_image("host", tag) == "host"
        done = subprocess.run(
            ["docker", "run", "--rm", "--network", "none", tag, "bash", "-c", probe],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    finally:
        subprocess.run(["docker", "rmi", "--force", tag], capture_output=True, check=False)
    assert (done.returncode, done.stdout.split(), done.stderr) == (0, ["1", "usr/bin", "1", "/tmp"], "")


def test_without_dpkg_or_mmdebstrap_it_says_why_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import coder_eval.sandbox.docker.base_image as base_image
    import coder_eval.sandbox.docker.rootfs as rootfs

    monkeypatch.setattr(base_image, "image_exists", lambda tag: False)
    monkeypatch.setattr(base_image.shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(rootfs.shutil, "which", lambda name, *a, **k: None)

    assert main(["--tag", "coder-eval/base-test:never"]) == 1
    assert (
        "mmdebstrap is not installed; install it with 'apt-get install mmdebstrap'" in capsys.readouterr().err
    )
