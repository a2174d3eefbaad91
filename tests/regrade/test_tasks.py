"""Which definition re-grades an episode: the recorded task, or a task file given to regrade."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.episode.runner import recorded_task_data, versions
from coder_eval.errors import TaskError
from coder_eval.regrade.tasks import TaskDefinitions, recorded_task
from coder_eval.task import TaskSpec, load_tasks
from coder_eval.trajectory import EpisodeStart
from tests.helpers import write_task

JSON_TASK = """
task_id: j
initial_prompt_file: prompt.md
hidden_tests: {path: hidden}
success_criteria:
  - type: json_check
    path: out.json
    assertions:
      - {expression: missing, equals: null}
      - {expression: count, at_least: 2}
"""


def start_of(task: TaskSpec) -> EpisodeStart:
    """The episode_start the runner records for ``task``."""
    plan = EpisodePlan(task)
    return EpisodeStart(
        run_id="r",
        episode_id=plan.episode_id,
        task_id=task.task_id,
        seed=plan.seed,
        task=recorded_task_data(task),
        versions=versions(),
    )


@pytest.fixture
def json_task(tmp_path: Path) -> TaskSpec:
    (tmp_path / "prompt.md").write_text("Write out.json.")
    (tmp_path / "hidden").mkdir()
    (task,) = load_tasks([write_task(tmp_path, JSON_TASK)])
    return task


def test_a_recorded_task_reads_back_as_written(json_task: TaskSpec) -> None:
    """``equals: null`` is a check only because it was written: the recording keeps that."""
    again = recorded_task(start_of(json_task))
    assert again.success_criteria == json_task.success_criteria
    assertions = again.success_criteria[0].assertions  # type: ignore[attr-defined]
    assert [(a.operator, a.expected, "expected" in a.model_fields_set) for a in assertions] == [
        ("equals", None, True),  # a written null is still a check of null
        ("gte", 2, True),
    ]
    assert again.initial_prompt == "Write out.json." and again.hidden_tests is None  # hidden: not recorded


def test_recorded_criteria_get_the_hidden_material_from_the_task_file(json_task: TaskSpec) -> None:
    graded = TaskDefinitions.load([]).for_episode(start_of(json_task))
    assert graded.source == "recorded" and graded.task.hidden_tests == json_task.hidden_tests
    assert graded.notes == ()


def test_a_task_file_that_is_gone_leaves_a_note(json_task: TaskSpec) -> None:
    assert json_task.source_path is not None
    json_task.source_path.unlink()
    graded = TaskDefinitions.load([]).for_episode(start_of(json_task))
    assert graded.task.hidden_tests is None
    assert len(graded.notes) == 1 and "hidden tests and reference not read again" in graded.notes[0]


def test_a_task_file_replaces_what_grading_reads_and_nothing_else(
    json_task: TaskSpec, tmp_path: Path
) -> None:
    newer = write_task(
        tmp_path / "now",
        """
        task_id: j
        initial_prompt: another prompt entirely
        agent: {kind: none}
        post_run: [touch graded]
        success_criteria: [{type: file_exists, path: out.json}]
        """,
    )
    definitions = TaskDefinitions.load([newer])
    graded = definitions.for_episode(start_of(json_task))
    assert (graded.source, graded.task_file) == ("task_file", str(newer))
    assert [c.type for c in graded.task.success_criteria] == ["file_exists"]
    assert [step.command for step in graded.task.post_run] == ["touch graded"]
    assert graded.task.hidden_tests is None
    assert (graded.task.initial_prompt, graded.task.agent.kind) == ("Write out.json.", "claude-code")
    assert definitions.unused({"j"}) == [] and definitions.unused({"other"}) == ["j"]


def test_a_recording_that_no_longer_reads_names_the_episode(json_task: TaskSpec) -> None:
    start = start_of(json_task)
    start.task["success_criteria"][0]["type"] = "retired_kind"
    with pytest.raises(TaskError, match=r"episode j--default--r0: the recorded task no longer validates"):
        TaskDefinitions.load([]).for_episode(start)
