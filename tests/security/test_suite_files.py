"""Attacks on the suite's own files: the graders' shared modules beside the task folder, and the
skills staged for the agent. The agent never sees the suite while it runs; the verifier shows the
suite's copy, read-only; a workspace copy of a grader's module is never what the grader imports."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .conftest import EVERY, ISOLATING, Attack

CHECK = """
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "graders"))
from common import EXPECTED
sys.exit(0 if open("answer.txt").read().strip() == EXPECTED else 1)
"""

TASK = """
task_id: answer
initial_prompt: Write the answer to answer.txt.
sandbox: {{driver: {driver}}}
success_criteria:
  - {{id: hidden, type: run_command, command: 'python "$TASK_DIR/../checks/check.py"'}}
"""

RUNS_AGENT_CODE = TASK.replace(
    "command: 'python \"$TASK_DIR/../checks/check.py\"'",
    "command: 'python solve.py; python \"$TASK_DIR/../checks/check.py\"'",
)


@pytest.fixture
def graders(tmp_path: Path) -> Path:
    """``graders/common.py`` (the answer is 42) and ``checks/check.py`` importing it, beside the
    folders the attack fixture makes its task files in."""
    (tmp_path / "graders").mkdir()
    (tmp_path / "graders" / "common.py").write_text('EXPECTED = "42"\n')
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "check.py").write_text(textwrap.dedent(CHECK))
    return tmp_path / "graders" / "common.py"


def outcome(attack: Attack, script: str, driver: str, task: str = TASK) -> tuple[str, float]:
    result = attack(script, driver, task=task)
    return result.end.outcome, result.score


@pytest.mark.parametrize("driver", EVERY)
def test_the_honest_answer_passes_and_a_wrong_one_fails(attack: Attack, driver: str, graders: Path) -> None:
    assert outcome(attack, "echo 42 > answer.txt", driver) == ("pass", 1.0)
    assert outcome(attack, "echo 41 > answer.txt", driver) == ("fail", 0.0)


@pytest.mark.parametrize("driver", EVERY)
def test_a_workspace_copy_of_the_graders_is_never_imported(
    attack: Attack, driver: str, graders: Path
) -> None:
    script = """
    echo 41 > answer.txt
    mkdir -p graders checks ../graders ../checks
    for d in graders ../graders . ; do echo 'EXPECTED = "41"' > "$d/common.py"; done
    for d in checks ../checks ; do echo 'raise SystemExit(0)' > "$d/check.py"; done
    """
    assert outcome(attack, script, driver) == ("fail", 0.0)


@pytest.mark.parametrize("driver", ISOLATING)
def test_the_agent_never_sees_the_suites_graders(attack: Attack, driver: str, graders: Path) -> None:
    script = f"""
    echo 41 > answer.txt
    cat {graders} > seen.txt 2>&1
    echo 'EXPECTED = "41"' > {graders}
    """
    result = attack(script, driver, task=TASK)

    assert (result.end.outcome, result.score) == ("fail", 0.0)
    assert graders.read_text() == 'EXPECTED = "42"\n'


@pytest.mark.parametrize("driver", ISOLATING)
def test_code_run_by_a_grader_cannot_rewrite_the_suites_files(
    attack: Attack, driver: str, graders: Path
) -> None:
    """The verifier shows the suite read-only: the agent's code, run by the grader, cannot change it."""
    script = f"""
    echo 41 > answer.txt
    cat > solve.py <<'PY'
    import pathlib
    for path in [pathlib.Path("{graders}"), pathlib.Path("{graders.parent.parent / "checks" / "check.py"}")]:
        try:
            path.write_text('EXPECTED = "41"\\n' if path.name == "common.py" else "raise SystemExit(0)\\n")
        except OSError as exc:
            print("refused:", exc)
    PY
    """
    result = attack(textwrap.dedent(script), driver, task=RUNS_AGENT_CODE)

    assert (result.end.outcome, result.score) == ("fail", 0.0)
    assert graders.read_text() == 'EXPECTED = "42"\n'
    assert "Read-only file system" in result.verdicts["hidden"].details["output"]


SCHEMA_TASK = """
task_id: report
initial_prompt: Write report.json.
sandbox:
  driver: {driver}
  template_sources: [{{type: template_dir, path: ../fixtures}}]
success_criteria:
  - {{id: hidden, type: json_check, path: report.json, json_schema: schemas/report.json}}
"""


@pytest.mark.parametrize("driver", EVERY)
def test_the_agent_loosening_its_workspace_copy_of_the_schema_changes_no_grade(
    attack: Attack, driver: str, tmp_path: Path
) -> None:
    (tmp_path / "fixtures" / "schemas").mkdir(parents=True)
    (tmp_path / "fixtures" / "schemas" / "report.json").write_text(
        '{"type": "object", "required": ["total"]}'
    )
    script = "echo '{}' > schemas/report.json && echo '{}' > report.json"

    assert outcome(attack, script, driver, task=SCHEMA_TASK) == ("fail", 0.0)
    assert outcome(attack, "echo '{\"total\": 3}' > report.json", driver, task=SCHEMA_TASK) == ("pass", 1.0)
