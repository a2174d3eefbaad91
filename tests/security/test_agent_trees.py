"""Trees the agent builds are its own to answer for: the harness walks them without recursion,
refuses one past the workspace's bounds as the agent's failure (``resource_limit``, never
``invalid``), follows no chain of links further than it can, and removes every sandbox whatever the
agent left in it: a tree 1,500 deep, paths longer than the system takes, folders without read or
search bits, immutable and append-only flags.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import run_episode
from coder_eval.task import load_tasks

from .conftest import EVERY, TASK, Attack, Outcome

pytestmark = pytest.mark.parametrize("driver", EVERY)

DEEP = """python3 - <<'EOF'
import os
for _ in range(1500):
    os.mkdir("d")
    os.chdir("d")
open("leaf.txt", "w").write("deep")
EOF"""

LONG = """python3 - <<'EOF'
import os
for _ in range(40):
    os.mkdir("n" * 200)
    os.chdir("n" * 200)
open("leaf.txt", "w").write("far")
EOF"""

CHAIN = """python3 - <<'EOF'
import os
open("a.txt", "w").write("x")
os.symlink("a.txt", "l0000")
for i in range(1, 1500):
    os.symlink(f"l{i - 1:04d}", f"l{i:04d}")
os.symlink("l1499", "answer.txt")
os.makedirs("graded/deeper")
os.symlink("../l1499", "graded/deeper/answer.txt")
EOF"""

CHAINED = (
    TASK
    + """  - {{id: answer, type: file_contains, path: answer.txt, includes: [x]}}
  - {{id: unchanged, type: file_unchanged, paths: ["graded/**"]}}
"""
)

LOCKED = """
mkdir -p locked/inner/deeper blind/below appendonly
echo x > locked/inner/deeper/f; echo y > blind/below/g; echo z > appendonly/h; echo w > frozen.txt
chattr +i frozen.txt 2>/dev/null; chattr +a appendonly 2>/dev/null
chmod 000 locked/inner/deeper locked/inner; chmod 100 locked; chmod 600 blind
"""


@pytest.fixture
def sandboxes(short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder every sandbox of the episode is made in (checked empty afterwards)."""
    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp))
    return short_tmp


def left_behind(outcome: Outcome, sandboxes: Path) -> list[str]:
    """Sandboxes the episode left: folders still there, and the leftovers its notes name."""
    notes = [note for note in outcome.end.notes if "cannot remove" in note]
    return [str(p) for p in sandboxes.iterdir()] + notes


def test_a_tree_past_the_depth_bound_is_the_agents_failure(
    attack: Attack, driver: str, sandboxes: Path
) -> None:
    outcome = attack(DEEP, driver)

    assert (outcome.end.outcome, outcome.end.status) == ("fail", "resource_limit"), outcome.summary()
    assert "deeper than 256 levels" in (outcome.end.error or "")
    assert "max_workspace_depth" in (outcome.end.error or "") and outcome.verdicts == {}
    assert left_behind(outcome, sandboxes) == []


def test_paths_longer_than_the_system_takes_are_the_agents_failure(
    attack: Attack, driver: str, sandboxes: Path
) -> None:
    outcome = attack(LONG, driver)

    assert (outcome.end.outcome, outcome.end.status) == ("fail", "resource_limit"), outcome.summary()
    assert "longer than" in (outcome.end.error or "") and outcome.verdicts == {}
    assert left_behind(outcome, sandboxes) == []


def test_modes_and_flags_the_agent_set_leave_nothing_behind(
    attack: Attack, driver: str, sandboxes: Path
) -> None:
    outcome = attack(LOCKED, driver)

    assert outcome.held(), outcome.summary()
    assert left_behind(outcome, sandboxes) == []


def test_a_chain_of_links_too_long_to_follow_is_the_agents_failure(
    attack: Attack, driver: str, sandboxes: Path
) -> None:
    outcome = attack(CHAIN, driver, CHAINED)

    assert outcome.held(), outcome.summary()
    assert outcome.verdicts["answer"].passed is False
    assert left_behind(outcome, sandboxes) == []


NEST = "python3 -c 'import os; [(os.mkdir(chr(100)), os.chdir(chr(100))) for _ in range(1500)]'"

CLAUDE = """
task_id: nest
initial_prompt: Fix calc.add.
agent: {{kind: claude-code, model: scripted, permission_mode: bypassPermissions}}
sandbox: {{driver: {driver}}}
scripted:
  model: claude-sonnet-4-5
  final_text: Done.
  turns:
    - blocks: [{{tool_use: {{name: Bash, input: {{command: "{nest}"}}}}}}]
success_criteria: [{{id: hidden, type: run_command, command: "test -d d"}}]
"""


@pytest.mark.slow
def test_the_real_cli_nesting_a_tree_through_its_bash_tool_fails_the_episode(
    driver: str, sandboxes: Path, tmp_path: Path
) -> None:
    if driver == "docker":
        pytest.skip("the bundled CLI runs under docker in tests/agents/test_agents_in_docker.py")
    (tmp_path / "task.yaml").write_text(CLAUDE.format(driver=driver, nest=NEST), encoding="utf-8")
    (task,) = load_tasks([tmp_path / "task.yaml"])

    end = asyncio.run(run_episode(EpisodePlan(task), "red-team", tmp_path / "episode.jsonl"))

    assert (end.outcome, end.status) == ("fail", "resource_limit"), (end.status, end.error)
    assert "deeper than 256 levels" in (end.error or "")
    assert list(sandboxes.iterdir()) == [] and not [n for n in end.notes if "cannot remove" in n]
