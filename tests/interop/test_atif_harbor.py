"""Exported ATIF documents against the models and validator the ``harbor`` package ships.

harbor needs Python >= 3.12: the ``harbor_python`` fixture (``conftest.py``, ``harbor_venv.py``) is
a venv of its own, made once and kept in pytest's cache folder. The documents come from real runs
(the scripted Claude Code example and the oracle on the example suite, through the CLI), the report
fixtures, and hand-built edge cases.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import EXAMPLES, REPO, coder_eval

from . import builders
from .harbor_venv import run

VALIDATE = """
import json, sys
from pathlib import Path
from harbor.models.trajectories import Trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator

report = {}
for path in sorted(Path(sys.argv[1]).rglob("*.json")):
    validator = TrajectoryValidator()
    valid = validator.validate(path)
    data = json.loads(path.read_text())
    same = valid and Trajectory(**data).to_json_dict(exclude_none=True) == data
    name = str(path.relative_to(sys.argv[1]))
    report[name] = {"valid": valid, "errors": validator.errors, "round_trip": same}
print(json.dumps(report))
"""
"""Validates every document under a folder with harbor's validator, and checks harbor's models read it
back unchanged (no field of ours dropped, renamed or reinterpreted)."""

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ATIF documents of real runs, the report fixtures and the edge cases, one folder per run."""
    root = tmp_path_factory.mktemp("atif")
    suite = root / "suite"
    shutil.copytree(EXAMPLES, suite / "examples")
    for args in (["examples/scripted_fix.yaml"], ["examples", "--agent", "oracle"]):
        ran = coder_eval("run", *args, "--no-report", cwd=suite)
        assert ran.returncode == 0, ran.stderr
    built = root / "built"
    for write in (
        builders.write_agent_episode,
        builders.write_oracle_episode,
        builders.write_interrupted_episode,
        builders.write_silent_episode,
        builders.write_orphan_result_episode,
    ):
        write(built)
    runs = [
        *sorted((suite / "runs").glob("2*")),
        REPO / "tests/fixtures/runs/skill-ab",
        built / builders.RUN_ID,
    ]
    for number, run_dir in enumerate(runs):
        exported = coder_eval(
            "export", str(run_dir), "--format", "atif", "--out", str(root / "out" / str(number)), cwd=root
        )
        assert exported.returncode == 0, exported.stderr
    return root / "out"


@pytest.fixture(scope="module")
def harbor_report(harbor_python: Path, documents: Path) -> dict[str, Any]:
    checked = run(harbor_python, "-c", VALIDATE, documents)
    assert checked.returncode == 0, checked.stderr
    report: dict[str, Any] = json.loads(checked.stdout)
    return report


def test_every_exported_document_is_valid_atif_for_harbor(harbor_report: dict[str, Any]) -> None:
    assert len(harbor_report) == 1 + 6 + 36 + 5
    invalid = {name: entry["errors"] for name, entry in harbor_report.items() if not entry["valid"]}
    assert invalid == {}


def test_harbors_models_read_every_document_back_unchanged(harbor_report: dict[str, Any]) -> None:
    assert [name for name, entry in harbor_report.items() if not entry["round_trip"]] == []


def test_harbor_rejects_a_document_that_breaks_the_format(
    harbor_python: Path, documents: Path, tmp_path: Path
) -> None:
    """The check can fail: a dangling observation and an unknown field are each caught."""
    source = json.loads(next(documents.rglob("fix--default--r0.json")).read_text(encoding="utf-8"))
    dangling = json.loads(json.dumps(source))
    dangling["steps"][2]["observation"]["results"][0]["source_call_id"] = "nobody"
    (tmp_path / "dangling.json").write_text(json.dumps(dangling), encoding="utf-8")
    (tmp_path / "unknown.json").write_text(json.dumps({**source, "colour": "red"}), encoding="utf-8")
    report = json.loads(run(harbor_python, "-c", VALIDATE, tmp_path).stdout)
    assert not report["dangling.json"]["valid"] and "'nobody'" in " ".join(report["dangling.json"]["errors"])
    assert report["unknown.json"]["errors"] == [
        "trajectory.colour: unexpected field (not part of ATIF schema)"
    ]


def test_the_scripted_claude_code_run_exports_its_real_tool_calls(documents: Path) -> None:
    exported = [
        json.loads(p.read_text(encoding="utf-8")) for p in documents.rglob("scripted-calc-fix--*.json")
    ]
    [data] = [d for d in exported if d["agent"]["name"] == "claude-code"]  # the other is the oracle's
    calls = [c["function_name"] for s in data["steps"] for c in s.get("tool_calls", [])]
    assert calls == ["Bash", "Read", "Edit", "Bash"]
    assert data["agent"]["version"] == data["agent"]["extra"]["versions"]["claude_code"]
    assert data["final_metrics"]["total_completion_tokens"] > 0
