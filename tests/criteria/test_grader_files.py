"""The suite's folders a task's graders use: named through $TASK_DIR, reached from a grader's own file."""

from __future__ import annotations

import textwrap
from pathlib import Path

from coder_eval.criteria.grader_files import file_relative_paths, named_paths, outermost, suite_folders
from coder_eval.task import load_tasks
from tests.helpers import write_task


def test_named_paths_in_any_field_normalise_dots_and_keep_the_spelling(tmp_path: Path) -> None:
    task_dir, reference = tmp_path / "tasks" / "t", tmp_path / "ref"
    criterion = {
        "command": 'python "$TASK_DIR/../graders/x.py" --ref ${REFERENCE_DIR}/a.json && ls $TASK_DIR',
        "files": ["out.md", "$TASK_DIR/rubric.md"],
    }

    found = named_paths(criterion, task_dir, reference)

    assert [(p.written, p.host) for p in found] == [
        ("$TASK_DIR/../graders/x.py", tmp_path / "tasks" / "graders" / "x.py"),
        ("${REFERENCE_DIR}/a.json", reference / "a.json"),
        ("$TASK_DIR", task_dir),
        ("$TASK_DIR/rubric.md", task_dir / "rubric.md"),
    ]
    assert named_paths({"command": "cat $REFERENCE_DIR/a"}, task_dir, None) == []


def test_folders_reached_from_a_graders_own_file(tmp_path: Path) -> None:
    for folder in ("graders", "data", "lib", "pkg"):
        (tmp_path / folder).mkdir()
    script = tmp_path / "tasks" / "check.py"
    script.parent.mkdir()
    script.write_text(
        textwrap.dedent(
            """
            import os, sys
            from pathlib import Path
            HERE = Path(__file__).resolve().parent
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "graders"))
            ROOT = HERE.parent                                         # assigned, used below only
            DATA = ROOT / "data"
            LIB = HERE.parents[0] / "lib"
            sys.path.append(str(LIB))
            expected = (DATA / "expected.json").read_text()
            PKG = str(Path(__file__).parent.parent.joinpath("pkg"))
            elsewhere = os.path.join(os.getcwd(), "..", "x")           # not from __file__
            """
        )
    )

    found = file_relative_paths(script)

    assert set(found) == {tmp_path / n for n in ("graders", "lib", "data/expected.json", "pkg")}


def test_suite_folders_of_a_team_style_task(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for folder in ("graders", "fixtures/app", "hidden/t1"):
        (suite / folder).mkdir(parents=True)
    (suite / "graders" / "check.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))\n"
    )
    (suite / "lib").mkdir()
    path = write_task(
        suite / "tasks",
        """
        task_id: t1
        initial_prompt: go
        sandbox: {template_sources: [{type: template_dir, path: ../fixtures/app}]}
        hidden_tests: {path: ../hidden/t1}
        success_criteria:
          - {type: run_command, command: 'python $TASK_DIR/../graders/check.py'}
        """,
    )
    (task,) = load_tasks([path])

    assert suite_folders(task.grader_sources()) == [
        suite / "tasks",
        suite / "hidden" / "t1",
        suite / "fixtures" / "app",
        suite / "graders",
        suite / "lib",
    ]


def test_outermost_drops_folders_inside_others(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert outermost([a / "x", b, a, a / "y", b]) == [b, a]
