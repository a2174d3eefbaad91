"""Task files: loading, fan-out, and every bad input rejected at load time with file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coder_eval.errors import TaskError
from coder_eval.task import load_tasks
from tests.helpers import EXAMPLES, coder_eval, minimal_task, write_task


def load_error(path: Path) -> str:
    with pytest.raises(TaskError) as caught:
        load_tasks([path])
    return str(caught.value)


def test_examples_load() -> None:
    tasks = load_tasks([EXAMPLES])
    assert {t.task_id for t in tasks} >= {"write-greeting", "fix-calc-bug", "inventory-report"}
    assert all(t.reference_script for t in tasks)


def test_unknown_top_level_key_names_line_and_suggests(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="sucess_criteria: []\n")
    message = load_error(path)
    assert f"{path}:8: sucess_criteria: unknown field (did you mean 'success_criteria'?)" in message


def test_unknown_nested_key_suggests(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="run_limits:\n  max_turn: 3\n")
    assert "run_limits.max_turn: unknown field (did you mean 'max_turns'?)" in load_error(path)


def test_unknown_criterion_field_and_type(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: t
        initial_prompt: p
        success_criteria:
          - type: file_exists
            pathh: a.txt
          - type: file_exist
            path: a.txt
        """,
    )
    message = load_error(path)
    assert ":5: success_criteria[0].pathh: unknown field (did you mean 'path'?)" in message
    assert ":6: success_criteria[1]: unknown type 'file_exist' (did you mean 'file_exists'?)" in message


def test_wrong_type_names_file_and_field(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="run_limits:\n  task_timeout: soon\n")
    message = load_error(path)
    assert str(path) in message
    assert "run_limits.task_timeout" in message


@pytest.mark.parametrize("bad", ["../outside.txt", "/etc/passwd"])
def test_criterion_path_escaping_sandbox(tmp_path: Path, bad: str) -> None:
    path = write_task(
        tmp_path,
        f"""
        task_id: t
        initial_prompt: p
        success_criteria:
          - type: file_exists
            path: {bad}
        """,
    )
    assert "success_criteria[0].path" in load_error(path)


def test_starter_file_escaping_sandbox(tmp_path: Path) -> None:
    path = minimal_task(
        tmp_path,
        extra="""
        sandbox:
          template_sources:
            - starter_files:
                - {path: ../../evil.sh, content: "rm -rf ~"}
        """,
    )
    message = load_error(path)
    assert "sandbox.template_sources[0].starter_files[0]" in message
    assert "escapes the sandbox" in message


@pytest.mark.parametrize(
    ("mount_point", "why"),
    [("../x", "escapes the sandbox"), ("/proc/x", "not the task's to use"), ("/", "absolute folder")],
)
def test_mount_point_escaping_sandbox(tmp_path: Path, mount_point: str, why: str) -> None:
    (tmp_path / "hidden").mkdir()
    path = minimal_task(tmp_path, extra=f"hidden_tests: {{path: hidden, mount_point: {mount_point!r}}}\n")
    message = load_error(path)
    assert "hidden_tests.mount_point" in message and why in message


def test_an_absolute_mount_point_is_a_folder_outside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "hidden").mkdir()
    path = minimal_task(tmp_path, extra="hidden_tests: {path: hidden, mount_point: /tests/}\n")
    (task,) = load_tasks([path])
    assert task.hidden_tests is not None and task.hidden_tests.mount_point == "/tests"
    assert task.container_paths() == ["/tests"]


def test_source_paths_resolve_relative_to_task_file(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "fixture"
    shared.mkdir(parents=True)
    (tmp_path / "shared" / "prompt.md").write_text("Do the thing.")
    path = write_task(
        tmp_path / "suite",
        """
        task_id: t
        initial_prompt_file: ../shared/prompt.md
        sandbox:
          template_sources:
            - template_dir: ../shared/fixture
        success_criteria:
          - {type: file_exists, path: x}
        """,
    )
    (task,) = load_tasks([path])
    assert task.prompt == "Do the thing."
    assert task.sandbox.template_sources[0].path == str(shared.resolve())


def test_missing_template_dir(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="sandbox:\n  template_sources:\n    - template_dir: nowhere\n")
    message = load_error(path)
    assert "sandbox.template_sources.0.path: directory 'nowhere' not found" in message
    assert "relative to the task file" in message


def test_missing_prompt_file(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: t
        initial_prompt_file: prompts/missing.md
        success_criteria:
          - {type: file_exists, path: x}
        """,
    )
    message = load_error(path)
    assert f"{path}:2: initial_prompt_file: file 'prompts/missing.md' not found" in message


def test_missing_hidden_tests(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="hidden_tests: {path: no_such_dir}\n")
    assert "hidden_tests.path: directory 'no_such_dir' not found" in load_error(path)


def test_invalid_regex(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: t
        initial_prompt: p
        success_criteria:
          - type: file_check
            path: a.txt
            patterns: ["(unclosed"]
        """,
    )
    message = load_error(path)
    assert ":6: success_criteria[0].patterns[0]: invalid regex '(unclosed'" in message


def test_empty_criteria(tmp_path: Path) -> None:
    path = write_task(tmp_path, "task_id: t\ninitial_prompt: p\nsuccess_criteria: []\n")
    assert f"{path}:3: success_criteria: List should have at least 1 item" in load_error(path)


def test_both_prompts_rejected(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="initial_prompt_file: p.md\n")
    assert "exactly one of 'initial_prompt' or 'initial_prompt_file'" in load_error(path)


def test_unknown_agent_kind(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="agent: {kind: orcale}\n")
    assert "unknown agent kind 'orcale' (did you mean 'oracle'?)" in load_error(path)


def test_invalid_yaml_names_line(tmp_path: Path) -> None:
    path = write_task(tmp_path, "task_id: t\ninitial_prompt: [unclosed\nsuccess_criteria: []\n")
    assert f"{path}:3: invalid YAML" in load_error(path)


def test_duplicate_task_ids(tmp_path: Path) -> None:
    minimal_task(tmp_path / "a", "same")
    minimal_task(tmp_path / "b", "same")
    assert "task_id 'same' is also used by" in load_error(tmp_path)


def test_recorded_calls_needs_a_declared_shim(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: t
        initial_prompt: p
        sandbox:
          shims: [{name: sitectl, target: tools/sitectl}]
        success_criteria:
          - {type: recorded_calls, shim: sitecli, min_calls: 1}
        """,
    )
    assert "reads shim 'sitecli' (did you mean 'sitectl'?)" in load_error(path)


def test_dataset_fan_out_substitutes_prompt_and_criteria(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text(json.dumps({"id": "b", "word": "beta"}) + "\n")
    path = write_task(
        tmp_path,
        """
        task_id: words
        initial_prompt: "Write ${row.word} to out.txt"
        dataset:
          rows: [{id: a, word: alpha}]
          paths: [rows.jsonl]
        success_criteria:
          - {type: file_contains, path: out.txt, includes: ["${row.word}"]}
        """,
    )
    tasks = load_tasks([path])
    assert [t.task_id for t in tasks] == ["words.a", "words.b"]
    assert tasks[1].prompt == "Write beta to out.txt"
    assert tasks[1].success_criteria[0].includes == ["beta"]  # type: ignore[union-attr]
    assert tasks[1].dataset_row == {"id": "b", "word": "beta"}


def test_dataset_missing_row_field(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: words
        initial_prompt: "Write ${row.wrod}"
        dataset: {rows: [{id: a, word: alpha}]}
        success_criteria: [{type: file_exists, path: x}]
        """,
    )
    message = load_error(path)
    assert "${row.wrod}" in message and "its fields: id, word" in message


def test_cli_exit_code_2_before_any_sandbox(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="run_limits: {max_turn: 3}\n")
    result = coder_eval("run", str(path), "--agent", "oracle", cwd=tmp_path)
    assert result.returncode == 2
    assert "did you mean 'max_turns'?" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_claude_code_without_network_is_rejected(tmp_path: Path) -> None:
    extra = "agent: {kind: claude-code}\nsandbox: {driver: bwrap, network: false}\n"
    path = minimal_task(tmp_path, extra=extra)
    assert "network: none cuts the claude-code agent off from its model" in load_error(path)


def test_bad_inline_script_is_rejected_at_load(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="scripted: {turns: [{blokcs: []}]}\n")
    message = load_error(path)
    assert "scripted" in message and "did you mean 'blocks'" in message


def test_bad_script_file_is_rejected_at_load_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text("turns:\n  - blocks: []\n  - erorr: {kind: overloaded}\n")
    path = minimal_task(tmp_path, extra="scripted: script.yaml\n")
    message = load_error(path)
    assert "script.yaml:3" in message and "did you mean 'error'" in message


@pytest.mark.parametrize("bad", ["a-", "a.", "x" * 201])
def test_ids_that_would_collide_as_file_names_or_overflow_are_rejected(tmp_path: Path, bad: str) -> None:
    path = minimal_task(tmp_path, "ok")
    path.write_text(path.read_text().replace("task_id: ok", f"task_id: {bad}"))
    assert "is not a valid id" in load_error(path)


def test_a_default_criterion_id_cannot_be_taken_by_another(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: t
        initial_prompt: p
        success_criteria:
          - {type: file_exists, path: a}
          - {type: file_exists, path: b, id: 0-file_exists}
        """,
    )
    assert "criterion ids must be unique" in load_error(path)


def test_a_row_id_that_cannot_name_a_task_says_which_row(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: ds
        initial_prompt: "${row.word}"
        dataset: {rows: [{id: ok, word: a}, {id: "row 1", word: b}]}
        success_criteria: [{type: file_exists, path: x}]
        """,
    )
    assert "dataset row 1: id 'row 1' cannot be part of a task id" in load_error(path)


def test_criterion_suite_thresholds_join_the_tasks_by_criterion_id(tmp_path: Path) -> None:
    body = """
    task_id: triggers
    initial_prompt: "${row.prompt}"
    suite_thresholds: {skill: {accuracy: 0.5}}
    dataset:
      rows: [{id: a, prompt: x, expected_skill: pdf}, {id: b, prompt: y, expected_skill: ""}]
    success_criteria:
      - id: skill
        type: skill_triggered
        description: the right skill
        expected_skill: "${row.expected_skill}"
        suite_thresholds: {recall.pdf: 0.9, accuracy: 0.8}
      - type: file_exists
        path: out
        suite_thresholds: {mean: 0.4}
    """
    tasks = load_tasks([write_task(tmp_path, body)])
    assert tasks[0].suite_gates == {
        "skill": {"accuracy": 0.8, "recall.pdf": 0.9},
        "1-file_exists": {"mean": 0.4},
    }


def test_dataset_path_rows_reach_the_reference_solution_and_a_prompt_file(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text('{"id": "r1", "word": "alpha"}\n{"id": "r2", "word": "beta"}\n')
    (tmp_path / "prompt.md").write_text("Write ${row.word} to out.txt\n")
    body = """
    task_id: words
    initial_prompt_file: prompt.md
    dataset: {path: rows.jsonl}
    reference_solution: echo ${row.word} > out.txt
    success_criteria:
      - {type: file_contains, path: out.txt, includes: ["${row.word}"]}
    """
    tasks = load_tasks([write_task(tmp_path, body)])
    assert [t.task_id for t in tasks] == ["words.r1", "words.r2"]
    assert tasks[1].prompt == "Write beta to out.txt\n"
    assert tasks[1].reference_script == "echo beta > out.txt"


def test_dataset_path_and_paths_together_and_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": "a"}\n')
    (tmp_path / "b.jsonl").write_text('{"id": "b"}\n')
    body = """
    task_id: t
    initial_prompt: p ${row.id}
    dataset: {path: a.jsonl, paths: [b.jsonl]}
    success_criteria: [{type: file_exists, path: x}]
    """
    assert [t.task_id for t in load_tasks([write_task(tmp_path, body)])] == ["t.a", "t.b"]
    with pytest.raises(TaskError, match=r"task.yaml:3: dataset file 'c.jsonl' not found"):
        load_tasks([write_task(tmp_path, body.replace("path: a.jsonl, paths: [b.jsonl]", "path: c.jsonl"))])
