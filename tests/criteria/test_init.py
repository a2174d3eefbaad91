"""The criteria table and docs/criteria.md stay in step: every kind documented, every example loads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from coder_eval.criteria import CRITERIA
from coder_eval.task import load_tasks
from tests.criteria.builders import criterion
from tests.helpers import REPO

DOC = (REPO / "docs" / "criteria.md").read_text(encoding="utf-8")
EXAMPLES = re.findall(r"```yaml[^\n]*\n(.*?)```", DOC, flags=re.DOTALL)


def test_every_kind_has_a_section_and_an_example() -> None:
    for kind in CRITERIA:
        assert f"### `{kind}`" in DOC, kind
        assert re.search(rf"type: {kind}\b", DOC), kind


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.split("\n", 1)[0][:40])
def test_documented_example_loads(example: str, tmp_path: Path) -> None:
    data: Any = yaml.safe_load(example)
    if isinstance(data, list):
        assert all(criterion(item).type in CRITERIA for item in data)
        return
    task = {"task_id": "doc", "initial_prompt": "p", **data}
    if "hidden_tests" in task:
        (tmp_path / task["hidden_tests"]["path"]).mkdir(parents=True)
    if isinstance(task.get("reference"), dict) and "directory" in task["reference"]:
        (tmp_path / task["reference"]["directory"]).mkdir(parents=True)
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(task), encoding="utf-8")
    assert load_tasks([path])
