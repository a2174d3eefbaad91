"""json_check: operators and their short forms, the schema inline or as a task file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coder_eval.errors import TaskError
from coder_eval.task import load_tasks
from tests.criteria.builders import context, grade, load_error, reason
from tests.helpers import REPO, write_task

DOC = {"total": 3, "owner": "ops", "items": [{"done": True}, {"done": False}], "flag": True, "gone": None}


def ctx_with(tmp_path: Path) -> object:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "out.json").write_text(json.dumps(DOC))
    return context(root=tmp_path)


@pytest.mark.parametrize(
    ("assertion", "holds"),
    [
        ({"expression": "total", "operator": "equals", "expected": 3}, True),
        ({"expression": "total", "operator": "not_equals", "expected": 3}, False),
        ({"expression": "owner", "operator": "contains", "expected": "p"}, True),
        ({"expression": "items[].done", "operator": "contains", "expected": False}, True),
        ({"expression": "total", "operator": "gt", "expected": 3}, False),
        ({"expression": "total", "operator": "gte", "expected": 3}, True),
        ({"expression": "total", "operator": "lt", "expected": 3.5}, True),
        ({"expression": "total", "operator": "lte", "expected": 2}, False),
        ({"expression": "flag", "operator": "gte", "expected": 0}, False),  # a boolean is not a number
        ({"expression": "owner", "operator": "type", "expected": "string"}, True),
        ({"expression": "total", "operator": "type", "expected": "integer"}, True),
        ({"expression": "flag", "operator": "type", "expected": "number"}, False),
        ({"expression": "items", "operator": "type", "expected": "list"}, True),
        ({"expression": "owner", "operator": "regex", "expected": "^o.s$"}, True),
        ({"expression": "gone", "operator": "exists"}, False),
        ({"expression": "owner", "operator": "exists"}, True),
        ({"expression": "missing", "operator": "exists", "expected": False}, True),
        ({"expression": "total", "at_least": 2}, True),
        ({"expression": "owner", "matches": "ops"}, True),
        ({"expression": "length(total)", "operator": "equals", "expected": 1}, False),  # a type error
    ],
)
def test_each_operator(tmp_path: Path, assertion: dict[str, object], holds: bool) -> None:
    verdict = grade({"type": "json_check", "path": "out.json", "assertions": [assertion]}, ctx_with(tmp_path))  # type: ignore[arg-type]
    assert verdict.score == (1.0 if holds else 0.0)


def test_both_spellings_load_to_the_same_assertion() -> None:
    from coder_eval.criteria.json_check import Assertion

    ours = Assertion.model_validate({"expression": "total", "at_most": 4})
    original = Assertion.model_validate({"expression": "total", "operator": "lte", "expected": 4})
    assert ours == original


@pytest.mark.parametrize(
    ("assertion", "message"),
    [
        ("{expression: a, operator: bigger, expected: 1}", "operator"),
        ("{expression: a, operator: gt, expected: x}", "needs a number"),
        ("{expression: a, operator: type, expected: thing}", "not a JSON type"),
        ("{expression: a, operator: regex, expected: '('}", "invalid regex"),
        ("{expression: a, operator: equals, expected: 1, equals: 1}", "not both"),
        ("{expression: a}", "give an operator and expected"),
    ],
)
def test_bad_assertions_fail_at_load(tmp_path: Path, assertion: str, message: str) -> None:
    error = load_error(tmp_path, f"- type: json_check\n  path: a.json\n  assertions: [{assertion}]")
    assert message in error and "task.yaml" in error


def schema_task(folder: Path, schema_ref: str, template: str = "") -> Path:
    return write_task(
        folder,
        f"""
        task_id: t
        description: d
        initial_prompt: p
        {template}
        success_criteria:
          - type: json_check
            description: the report has a total
            path: out.json
            json_schema: {schema_ref}
        """,
    )


def test_json_schema_as_a_task_file_is_resolved_and_applied(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "report.json").write_text('{"type": "object", "required": ["total", "owners"]}')
    (task,) = load_tasks([schema_task(tmp_path, "schemas/report.json")])
    spec = task.success_criteria[0]
    assert spec.json_schema == str((tmp_path / "schemas" / "report.json").resolve())  # type: ignore[attr-defined]
    verdict = grade(spec.model_dump(by_alias=False), ctx_with(tmp_path / "ws"))
    assert verdict.score == 0.0 and "'owners' is a required property" in verdict.details["schema_errors"]


def test_json_schema_found_through_its_template_folder(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "schema.json").write_text('{"type": "object"}')
    template = "sandbox: {template_sources: [{type: template_dir, path: fixtures, mount_point: app}]}"
    (task,) = load_tasks([schema_task(tmp_path, "app/schema.json", template)])
    assert task.success_criteria[0].json_schema == str((tmp_path / "fixtures" / "schema.json").resolve())  # type: ignore[attr-defined]


def test_the_templates_copy_wins_over_a_task_file_of_the_same_name(tmp_path: Path) -> None:
    """The original reads the schema in the sandbox, where the template put it: that copy, from the suite."""
    for folder, required in (("schemas", "decoy"), ("fixtures/schemas", "total")):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "report.json").write_text(f'{{"type": "object", "required": ["{required}"]}}')
    template = "sandbox: {template_sources: [{type: template_dir, path: fixtures}]}"

    (task,) = load_tasks([schema_task(tmp_path, "./schemas/report.json", template)])

    assert task.success_criteria[0].json_schema == str(
        (tmp_path / "fixtures" / "schemas" / "report.json").resolve()
    )  # type: ignore[attr-defined]


def test_json_schema_from_starter_files_inline_listed_or_a_local_repository(tmp_path: Path) -> None:
    inline = (
        "sandbox: {template_sources: [{type: starter_files, files: "
        '[{path: s.json, content: \'{"type": "object", "required": ["total"]}\'}]}]}'
    )
    (task,) = load_tasks([schema_task(tmp_path / "inline", "s.json", inline)])
    assert task.success_criteria[0].json_schema == {"type": "object", "required": ["total"]}  # type: ignore[attr-defined]

    (tmp_path / "app" / "schemas").mkdir(parents=True)
    (tmp_path / "app" / "schemas" / "s.json").write_text('{"type": "array"}')
    listed = (
        f"sandbox: {{template_sources: [{{type: template_dir, path: {tmp_path / 'app'}, files: [schemas]}}]}}"
    )
    (task,) = load_tasks([schema_task(tmp_path / "listed", "schemas/s.json", listed)])
    assert task.success_criteria[0].json_schema == str(tmp_path / "app" / "schemas" / "s.json")  # type: ignore[attr-defined]

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "s.json").write_text('{"type": "string"}')
    for command in (
        ["init", "-q"],
        ["add", "s.json"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "s"],
    ):
        subprocess.run(["git", "-C", str(repo), *command], check=True)
    (repo / "s.json").write_text('{"type": "number"}')  # after the commit: not what the clone holds
    cloned = f"sandbox: {{template_sources: [{{type: repo, url: {repo}}}]}}"
    (task,) = load_tasks([schema_task(tmp_path / "cloned", "repo/s.json", cloned)])
    assert task.success_criteria[0].json_schema == {"type": "string"}  # type: ignore[attr-defined]


def test_a_schema_only_a_remote_repository_holds_is_refused_by_name(tmp_path: Path) -> None:
    remote = "sandbox: {template_sources: [{type: repo, url: 'https://example.org/app.git'}]}"

    with pytest.raises(TaskError, match=r"json_schema: repo/s.json would come from the repository https://"):
        load_tasks([schema_task(tmp_path, "repo/s.json", remote)])


def test_missing_or_invalid_schema_file_fails_at_load_with_the_line(tmp_path: Path) -> None:
    with pytest.raises(
        TaskError, match=r"task.yaml:9: success_criteria\[0\].json_schema: file 'nope.json' not found"
    ):
        load_tasks([schema_task(tmp_path, "nope.json")])
    (tmp_path / "bad.json").write_text('{"type": 12}')
    with pytest.raises(TaskError, match="invalid JSON Schema"):
        load_tasks([schema_task(tmp_path, "bad.json")])


def test_inline_schema_keeps_both_names(tmp_path: Path) -> None:
    for key in ("schema", "json_schema"):
        spec = {"type": "json_check", "path": "out.json", key: {"type": "object", "required": ["total"]}}
        assert grade(spec, ctx_with(tmp_path)).score == 1.0  # type: ignore[arg-type]


def test_a_failed_assertion_says_what_it_found(tmp_path: Path) -> None:
    ctx = ctx_with(tmp_path)
    check = {"type": "json_check", "path": "out.json", "assertions": [{"expression": "total", "equals": 24}]}
    assert reason(check, ctx).startswith('failed: total equals 24, found 3 in out.json: \'{"total": 3, ')
    missing = {
        **check,
        "assertions": [{"expression": "nothere", "equals": 1}, {"expression": "owner", "matches": "^dev"}],
    }
    assert grade(missing, ctx).details["failed"] == [
        "nothere equals 1, found nothing",
        "owner regex '^dev', found 'ops'",
    ]
    (tmp_path / "out.json").write_text(json.dumps({"total": "\u202e3\x1b[2J" + "9" * 500}))
    found = grade(check, context(root=tmp_path)).details["failed"][0]
    assert found.startswith("total equals 24, found '\\u202e3\\x1b[2J999") and found.endswith(
        "(+346 characters)"
    )


def test_numbers_no_double_holds_are_never_ordered_and_say_why() -> None:
    from coder_eval.criteria.json_check import Assertion, compare, out_of_range

    at_least = Assertion.model_validate({"expression": "n", "at_least": 3})

    assert at_least.judged({"n": 10**400}) == (
        False,
        "n: a 401-digit integer, past the range of a JSON number; not compared",
    )
    assert at_least.judged({"n": float("inf")}).problem == "n: inf is not a finite number; not compared"
    assert at_least.judged({"n": 2**60 + 1}) == (True, None)
    assert compare("gt", 2**60 + 1, float(2**60)) and not compare("lte", 10**400, 5)
    assert out_of_range("10" * 400) is None


GRADE_IN_A_FRESH_PROCESS = """
import sys
from pathlib import Path
from coder_eval.task import load_tasks
from tests.criteria.test_json_check import ctx_with, grade, schema_task

folder = Path(sys.argv[1])
(task,) = load_tasks([schema_task(folder, "s.json")])
verdict = grade(task.success_criteria[0].model_dump(by_alias=False), ctx_with(folder / "ws"))
print(verdict.score, verdict.details.get("schema_errors"))
print(sys.modules.get("rfc3987_syntax") is not None)
"""


def test_a_schema_is_checked_and_applied_without_building_jsonschemas_iri_grammar(tmp_path: Path) -> None:
    """jsonschema's optional ``iri`` format check costs about 1 s to import, and no check here uses it."""
    (tmp_path / "s.json").write_text('{"$id": "https://example.org/s", "type": "object", "required": ["x"]}')
    done = subprocess.run(
        [sys.executable, "-c", GRADE_IN_A_FRESH_PROCESS, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.splitlines() == ["0.0 [\"'x' is a required property\"]", "False"], done.stderr
