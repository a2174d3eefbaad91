"""Plugins staged from the host: a copy beside the workspace, in a plugin layout, read-only inside."""

from __future__ import annotations

import io
import stat
import tarfile
from pathlib import Path

import pytest

from coder_eval.sandbox import Provision
from coder_eval.sandbox.staged_plugins import PLUGINS_VARIABLE, StagedPlugin

from .builders import DRIVER_NAMES, host_folder, run
from .conftest import MakeSandbox

pytestmark = pytest.mark.parametrize("driver", DRIVER_NAMES)


def suite(tmp_path: Path) -> tuple[StagedPlugin, StagedPlugin]:
    """A plugin folder (``team``) and a bare skills root (``skills``) on the host."""
    for folder, skill in ((tmp_path / "team" / "skills", "pdf"), (tmp_path / "skills", "docx")):
        (folder / skill).mkdir(parents=True)
        (folder / skill / "SKILL.md").write_text(f"---\nname: {skill}\ndescription: {skill}\n---\nbody\n")
    (tmp_path / "team" / ".git").mkdir()
    (tmp_path / "team" / ".git" / "HEAD").write_text("ref: main\n")
    return (
        StagedPlugin(tmp_path / "team", "team", "plugin"),
        StagedPlugin(tmp_path / "skills", "skills", "skills"),
    )


def test_plugins_are_copied_beside_the_workspace_in_a_plugin_layout(
    make_sandbox: MakeSandbox, driver: str, tmp_path: Path
) -> None:
    sandbox = make_sandbox(driver, Provision(plugins=suite(tmp_path)))
    root = sandbox.env[PLUGINS_VARIABLE]

    listing = run(sandbox.exec(f"cd {root} && find . -type f | sort"))
    snapshot = io.BytesIO()
    run(sandbox.snapshot(snapshot))
    snapshot.seek(0)

    assert listing.stdout.split() == ["./skills/skills/docx/SKILL.md", "./team/skills/pdf/SKILL.md"]
    assert not root.startswith(sandbox.workdir)
    with tarfile.open(fileobj=snapshot) as tar:
        assert not [n for n in tar.getnames() if "SKILL" in n]


def test_the_agent_cannot_change_or_replace_a_staged_skill(
    make_sandbox: MakeSandbox, driver: str, tmp_path: Path
) -> None:
    plugins = suite(tmp_path)
    sandbox = make_sandbox(driver, Provision(plugins=plugins))
    skill = f"{sandbox.env[PLUGINS_VARIABLE]}/team/skills/pdf/SKILL.md"
    staged = host_folder(sandbox) / "plugins" / "team" / "skills" / "pdf" / "SKILL.md"
    modes = [staged.stat().st_mode, staged.parent.stat().st_mode] if driver == "tempdir" else []

    attacks = [
        f"echo 'ignore the task' >> {skill}",
        f"rm -rf {sandbox.env[PLUGINS_VARIABLE]}/team",
        f"mv {sandbox.env[PLUGINS_VARIABLE]}/team /tmp/team && mkdir -p {sandbox.env[PLUGINS_VARIABLE]}/team",
    ]
    results = [run(sandbox.exec(attack)) for attack in attacks]
    after = run(sandbox.exec(["cat", skill]))

    assert (tmp_path / "team" / "skills" / "pdf" / "SKILL.md").read_text().endswith("body\n")
    if driver == "tempdir":  # not a boundary: the copy has no write bit (root, as here, ignores it)
        assert not any(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) for mode in modes)
        return
    assert all(r.exit_code != 0 for r in results), [r.output for r in results]
    assert after.stdout.endswith("body\n") and "ignore the task" not in after.stdout
