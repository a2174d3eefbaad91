"""read_yaml: parsed data with the line of every key; duplicate keys are rejected with both lines."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from coder_eval.errors import InputError, TaskError
from coder_eval.scripted import load_script
from coder_eval.task import load_tasks
from coder_eval.yaml_source import read_yaml
from tests.helpers import write_task


def test_lines_are_remembered_for_keys_and_items(tmp_path: Path) -> None:
    path = write_task(tmp_path, "task_id: t\nsuccess_criteria:\n  - type: file_exists\n    path: a\n")

    doc = read_yaml(path)

    assert doc.data["success_criteria"][0]["path"] == "a"
    assert doc.line_of(("success_criteria", 0, "path")) == 4


def test_a_duplicate_key_names_both_lines(tmp_path: Path) -> None:
    path = write_task(tmp_path, "task_id: a\ninitial_prompt: p\ntask_id: b\n")

    with pytest.raises(InputError) as caught:
        read_yaml(path)

    assert str(caught.value) == f"{path}:3: duplicate key 'task_id' (first at line 1); remove one"


def test_a_nested_duplicate_key_in_a_task_file_is_a_task_error(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: t
        initial_prompt: p
        success_criteria:
          - type: file_exists
            path: a.txt
            path: b.txt
        """,
    )

    with pytest.raises(TaskError, match=r"task\.yaml:6: duplicate key 'path' \(first at line 5\)"):
        load_tasks([path])


def test_keys_from_a_merge_may_be_overridden(tmp_path: Path) -> None:
    path = write_task(tmp_path, "base: &b {x: 1, y: 2}\nmine:\n  <<: *b\n  x: 3\n")

    assert read_yaml(path).data["mine"] == {"x": 3, "y": 2}


def test_a_script_with_a_duplicate_key_is_a_task_error(tmp_path: Path) -> None:
    path = write_task(tmp_path, "final_text: a\nturns: []\nfinal_text: b\n", "script.yaml")

    with pytest.raises(TaskError) as caught:
        load_script(path)

    assert str(caught.value) == f"{path}:3: duplicate key 'final_text' (first at line 1); remove one"


BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"task_id: t\n\x00\x01\x02binary", "a binary file, not YAML text"),
        ("task_id: caf\u00e9\n".encode("latin-1"), ":1: not UTF-8 text"),
        (b"task_id: t\nx: " + b"[" * 5000 + b"]" * 5000, "nested"),
        (b"task_id: t\nx: &r [*r]\n", "nested deeper than 64 levels"),
        (BILLION_LAUGHS.encode(), "expands to more than 200,000 values through its aliases"),
    ],
)
def test_hostile_yaml_is_refused_with_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "task.yaml"
    path.write_bytes(content)

    with pytest.raises(TaskError) as caught:
        load_tasks([path])

    assert str(path) in str(caught.value) and message in str(caught.value)


def test_a_huge_task_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    with path.open("wb") as handle:
        handle.write(b"task_id: t\n")
        handle.truncate(50 * 1024 * 1024)
    started = time.monotonic()

    with pytest.raises(TaskError, match=r"50\.0 MB is more than a YAML file may be \(10 MB\)"):
        load_tasks([path])

    assert time.monotonic() - started < 1.0
