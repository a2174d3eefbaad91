"""The expected tests: collected once from the pristine workspace, again only when its inputs change."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from coder_eval.criteria.expected_tests import ExpectedTests
from coder_eval.episode import pristine
from coder_eval.sandbox import Provision, make_sandbox
from coder_eval.task import TaskSpec, load_tasks

FIXTURES = Path(__file__).parent.parent / "security" / "fixtures"
TASK = f"""
task_id: calc
initial_prompt: Fix calc.add.
sandbox:
  driver: tempdir
  template_sources: [{{type: template_dir, path: {FIXTURES / "calc"}}}]
hidden_tests: {{path: {FIXTURES / "hidden_skips"}}}
success_criteria:
  - {{type: hidden_tests, command: python -m pytest -q hidden_tests}}
  - {{type: file_exists, path: calc/core.py}}
"""


def expected(task: TaskSpec, edit: str | None = None) -> list[Any]:
    async def collect() -> list[Any]:
        sandbox = await make_sandbox(task.sandbox, Provision(sources=tuple(task.sandbox.template_sources)))
        try:
            if edit is not None:
                await sandbox.write_file("calc/extra.py", edit)
            return await pristine.with_expected_tests(task, sandbox, [None, "kept"], None)
        finally:
            await sandbox.close()

    return asyncio.run(collect())


def test_the_hidden_tests_are_collected_from_the_pristine_workspace_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "task.yaml").write_text(TASK, encoding="utf-8")
    (task,) = load_tasks([tmp_path / "task.yaml"])
    opened = []
    real = pristine.open_verifier
    monkeypatch.setattr(pristine, "open_verifier", lambda *a, **k: opened.append(1) or real(*a, **k))

    first, second, changed = expected(task), expected(task), expected(task, edit="x = 1\n")

    assert isinstance(first[0], ExpectedTests) and first[1] == "kept"
    assert len(first[0].ids) == 6 and first[0].marked == {
        "hidden_tests/test_other.py::test_divide",
        "hidden_tests/test_other.py::test_power",
    }
    assert second == first and changed[0].ids == first[0].ids
    assert len(opened) == 2  # the second episode's workspace was the same: no second collection
