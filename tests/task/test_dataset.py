"""Dataset rows read from JSONL files: a bad row is named by its file and 1-based line."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import TaskError
from coder_eval.task import load_tasks
from tests.helpers import write_task

DATASET_TASK = """
task_id: ds
initial_prompt: "Say ${row.word}"
dataset: {paths: [rows.jsonl]}
success_criteria: [{type: file_exists, path: x}]
"""


def load_error(folder: Path, rows: str, body: str = DATASET_TASK) -> str:
    (folder / "rows.jsonl").write_text(rows, encoding="utf-8")
    path = write_task(folder, body)
    with pytest.raises(TaskError) as caught:
        load_tasks([path])
    return str(caught.value)


@pytest.mark.parametrize(
    ("rows", "says"),
    [
        (
            '{"id": "a", "word": "x"}\n["b", "y"]\n',
            "rows.jsonl:2: dataset row is not an object (a JSON array)",
        ),
        ('{"id": "a", "word": "x"}\n\n"b"\n', "rows.jsonl:3: dataset row is not an object (a JSON string)"),
        ('{"id": "a", "word": "x"}\n{"word": "y"}\n', "rows.jsonl:2: dataset row has no 'id' (id_field)"),
        ('{"id": "a", "word": "x"}\n{"id": "b c"}\n', "rows.jsonl:2: dataset row: id 'b c' cannot be part"),
        ('{"id": "a", "word": "x"}\n{"id": "a"}\n', "rows.jsonl:2: dataset row: id 'a' is also the id of"),
        ('{"id": "a", "word": "x"}\n{"id": \n', "rows.jsonl:2: invalid JSON in dataset"),
    ],
)
def test_a_bad_row_is_named_by_its_file_and_line(tmp_path: Path, rows: str, says: str) -> None:
    message = load_error(tmp_path, rows)
    assert f"{tmp_path / 'rows.jsonl'}:" in message
    assert says in message


def test_a_duplicate_row_id_names_both_rows(tmp_path: Path) -> None:
    message = load_error(tmp_path, '{"id": "a", "word": "x"}\n{"id": "b"}\n{"id": "a"}\n')
    assert message.endswith(f"is also the id of the row at {tmp_path / 'rows.jsonl'}:1")


def test_the_same_dataset_file_given_twice_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text('{"id": "a", "word": "x"}\n{"id": "b", "word": "y"}\n')
    body = DATASET_TASK.replace("paths: [rows.jsonl]", "paths: [rows.jsonl, ./rows.jsonl]")
    tasks = load_tasks([write_task(tmp_path, body)])
    assert [t.task_id for t in tasks] == ["ds.a", "ds.b"]


def test_a_dataset_file_that_is_a_symlink_loop_is_called_one(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").symlink_to("rows.jsonl")
    path = write_task(tmp_path, DATASET_TASK)
    with pytest.raises(TaskError, match=r"dataset file 'rows.jsonl' is a symlink loop"):
        load_tasks([path])
