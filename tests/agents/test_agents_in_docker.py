"""Every CLI agent run inside a docker container, reaching only its (scripted) model through the
model route, graded in a fresh verifier container."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.scripted import ScriptedServer
from coder_eval.trajectory import PhaseEvent, ToolResult

from .test_cli_agents import (
    AGENTS,
    EDIT_AND_RUN,
    EDIT_CRITERIA,
    SLEEP,
    criteria,
    run,
    status_at_the_limit,
    survivors,
    task_file,
)

pytestmark = [pytest.mark.slow, pytest.mark.docker]

WHERE = """
- blocks: [{tool_use: {name: Bash, input: {command: "cat /proc/sys/kernel/hostname; pwd; echo home=$HOME"}}}]
"""


def docker_task(folder: Path, kind: str, turns: str, criteria: str, extra: str = "") -> Path:
    """A scripted task for agent ``kind`` in a docker sandbox with ``network: model``."""
    mode = ", permission_mode: bypassPermissions" if kind == "claude-code" else ""  # its default asks
    sandbox = "  driver: docker\n  network: model\n"
    return task_file(
        folder, kind, turns, criteria, extra, task_id="docker", agent_options=mode, sandbox_options=sandbox
    )


@pytest.mark.parametrize("kind", [pytest.param("claude-code"), *AGENTS])
def test_each_agent_works_inside_the_container(kind: str, tmp_path: Path) -> None:
    graders = EDIT_CRITERIA.replace("expected: 4", "expected: 5")  # the Bash call of WHERE too
    end, events = run(docker_task(tmp_path, kind, WHERE + EDIT_AND_RUN, graders), tmp_path)

    failed = {k: c.details for k, c in criteria(events).items() if not c.passed}
    assert (end.outcome, end.status, failed) == ("pass", "completed", {}), end.error
    where = next(e.output for e in events if isinstance(e, ToolResult))
    assert where.split()[:3] == ["coder-eval", "/workspace", "home=/coder_eval/home"]
    agent_phase = next(e for e in events if isinstance(e, PhaseEvent) and e.name == "agent")
    assert agent_phase.details == {"driver": "docker", "workdir": "/workspace", "home": "/coder_eval/home"}


def test_plugin_skills_are_staged_into_the_container(tmp_path: Path) -> None:
    skill = tmp_path / "site-tools" / "skills" / "sitectl"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: sitectl\ndescription: Manage the site.\n---\nUse --draft.\n")
    turns = """
    - when: {skill_offered: sitectl}
      blocks: [{tool_use: {name: Skill, input: {skill: sitectl}}}]
    - blocks: [{text: "Done."}]
    """
    path = docker_task(tmp_path, "codex", turns, "- {type: skill_triggered, skill: sitectl}")
    text = path.read_text().replace("agent: {kind: codex, model: scripted}\n", "")
    text = text.replace(
        "    - starter_files:",
        "    - {template_dir: site-tools, target: .plugins/site-tools}\n    - starter_files:",
    )
    path.write_text(text + "agent: {kind: codex, model: scripted, plugins: [.plugins/site-tools]}\n")

    end, events = run(path, tmp_path)

    assert (end.outcome, criteria(events)["skill_triggered"].observed_label) == ("pass", "sitectl"), end.error


def test_the_task_timeout_leaves_no_process_in_the_container(
    tmp_path: Path, servers: list[ScriptedServer]
) -> None:
    turns = f"""
    - blocks: [{{tool_use: {{name: Bash, input: {{command: "(setsid {SLEEP} &); {SLEEP} &"}}}}}}]
    - error: {{kind: hang}}
    """
    extra = "run_limits: {task_timeout: 8}\n"
    path = docker_task(tmp_path, "claude-code", turns, "- {type: file_exists, path: calc.py}", extra)

    end, _ = run(path, tmp_path)

    assert end.status == status_at_the_limit(servers), end.error
    assert survivors("time.sleep(300.25)") == []
