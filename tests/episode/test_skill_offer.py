"""What an episode offers its agent: host plugins staged under their own names, and workspace plugins
read where they are (a bare skills root there gets a plugin folder of its own in HOME)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from coder_eval.agents.claude_code.spec import ClaudeCodeSpec
from coder_eval.episode.skill_offer import offered_plugins, plugin_staging
from coder_eval.sandbox import Provision, TempdirSandbox, TempdirSpec
from coder_eval.sandbox.spec import StarterFile, StarterFiles
from coder_eval.sandbox.staged_plugins import PLUGINS_VARIABLE


def skill(folder: Path, name: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}-skill\ndescription: d\n---\n")


def test_host_plugins_are_staged_under_names_of_their_own(tmp_path: Path) -> None:
    skill(tmp_path / "a" / "team" / "skills", "pdf")
    skill(tmp_path / "b" / "team", "docx")  # a bare skills root of the same folder name
    spec = ClaudeCodeSpec(plugins=[str(tmp_path / "a" / "team"), str(tmp_path / "b" / "team")])

    staging = plugin_staging(spec)

    async def offer() -> list[object]:
        sandbox = await TempdirSandbox.create(
            TempdirSpec(), Provision(plugins=tuple(s.staged for s in staging)), base_dir=tmp_path
        )
        try:
            root = sandbox.env[PLUGINS_VARIABLE]
            offered = await offered_plugins(spec, sandbox, staging)
            files = await sandbox.exec(f"cd {root} && find . -name SKILL.md | sort")
            return [root, offered, files.stdout.split()]
        finally:
            await sandbox.close()

    root, offered, files = asyncio.run(offer())
    assert [(s.staged.name, s.staged.layout) for s in staging] == [("team", "plugin"), ("team-2", "skills")]
    assert files == ["./team-2/skills/docx/SKILL.md", "./team/skills/pdf/SKILL.md"]
    assert [(p.name, p.path, p.skills) for p in offered] == [  # type: ignore[attr-defined]
        ("team", f"{root}/team", (("pdf-skill", f"{root}/team/skills/pdf"),)),
        ("team-2", f"{root}/team-2", (("docx-skill", f"{root}/team-2/skills/docx"),)),
    ]


def test_a_bare_skills_root_in_the_workspace_gets_a_plugin_folder_in_home(tmp_path: Path) -> None:
    made = StarterFiles(files=[StarterFile(path="kit/lint/SKILL.md", content="---\nname: lint\n---\n")])
    spec = ClaudeCodeSpec(plugins=["kit"])

    async def offer() -> tuple[str, object, str]:
        sandbox = await TempdirSandbox.create(TempdirSpec(), Provision(sources=(made,)), base_dir=tmp_path)
        try:
            (plugin,) = await offered_plugins(spec, sandbox, [])
            copied = await sandbox.exec(["cat", f"{plugin.path}/skills/lint/SKILL.md"])
            return sandbox.env["HOME"], plugin, copied.stdout
        finally:
            await sandbox.close()

    home, plugin, copied = asyncio.run(offer())
    assert (plugin.name, plugin.path, plugin.source) == ("kit", f"{home}/.coder_eval/plugins/kit", "kit")  # type: ignore[attr-defined]
    assert plugin.skills == (("lint", f"{home}/.coder_eval/plugins/kit/skills/lint"),)  # type: ignore[attr-defined]
    assert copied.startswith("---\nname: lint")
