"""Plan warnings: set-ups that would run but measure the wrong thing."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from coder_eval.errors import InputError, TaskError
from coder_eval.experiment import checks
from coder_eval.experiment.checks import check_environments, environment_problems, plan_warnings
from coder_eval.task import TaskSpec, load_tasks
from tests.experiment.builders import resolved, two_tasks, word_dataset, write_experiment
from tests.helpers import write_task
from tests.sandbox.builders import BWRAP_PROBLEM

SKILL_AB = """
experiment_id: skills
defaults: {agent: {kind: claude-code}}
variants:
  - variant_id: base
  - variant_id: skill
    template_sources: [{template_dir: plugin, target: .plugins/p}]
    agent: {plugins: [.plugins/p]}
"""


@pytest.fixture(autouse=True)
def model_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key on the host: these tests are about the other warnings (test_credentials.py has those)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")


def warnings_for(tmp_path: Path, experiment: str, tasks: Path | None = None) -> list[str]:
    return plan_warnings(resolved([tasks or two_tasks(tmp_path)], write_experiment(tmp_path, experiment)))


def test_clean_experiment_has_no_warnings(tmp_path: Path) -> None:
    (tmp_path / "plugin" / "skills" / "deploy").mkdir(parents=True)
    (tmp_path / "plugin" / "skills" / "deploy" / "SKILL.md").write_text("---\nname: deploy\n---\n")
    assert warnings_for(tmp_path, SKILL_AB) == []


def test_plugin_without_skill_md(tmp_path: Path) -> None:
    (tmp_path / "plugin" / "skills" / "deploy").mkdir(parents=True)
    (tmp_path / "plugin" / "skills" / "deploy" / "skill.txt").write_text("misnamed")
    found = warnings_for(tmp_path, SKILL_AB.replace("  - variant_id: base\n", ""))
    folder = tmp_path / "plugin"
    assert found == [
        f"variant 'skill': agent.plugins entry '{folder}' holds no skill (no skills/<name>/SKILL.md, nor "
        "<name>/SKILL.md in a bare skills root): no skill would load"
    ]


def test_plugin_pointing_elsewhere_than_the_template_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plugin" / "skills" / "deploy").mkdir(parents=True)
    (tmp_path / "plugin" / "skills" / "deploy" / "SKILL.md").write_text("x")
    refused = (
        r"experiment.yaml:7: variants\[1\].agent.plugins\[0\]: '.plugins/q' is neither next to .*"
        r"experiment.yaml .* nor in the working directory .*and no template source"
    )
    with pytest.raises(TaskError, match=refused):
        warnings_for(tmp_path, SKILL_AB.replace("plugins: [.plugins/p]", "plugins: [.plugins/q]"))


def test_identical_variants(tmp_path: Path) -> None:
    experiment = "experiment_id: e\nvariants: [{variant_id: a}, {variant_id: b, agent: {model: null}}]\n"
    (found,) = warnings_for(tmp_path, experiment)
    assert "variants 'a' and 'b' resolve to the same configuration" in found


def test_criteria_using_an_empty_row_field(tmp_path: Path) -> None:
    path = word_dataset(tmp_path)
    path.write_text(path.read_text().replace("word: w1,", "word: '',"))
    found = plan_warnings(resolved([path]))
    assert len(found) == 1
    assert "success_criteria[0] uses ${row.word}, empty in 1 of 6 rows (words.r1)" in found[0]


def test_empty_expected_label_is_a_negative_not_a_warning(tmp_path: Path) -> None:
    path = write_task(
        tmp_path,
        """
        task_id: skills
        initial_prompt: "${row.prompt}"
        dataset:
          rows:
            - {id: a, prompt: "fill the form", expected_skill: pdf}
            - {id: b, prompt: "what is a pdf", expected_skill: ""}
        success_criteria:
          - {type: skill_triggered, expected_skill: "${row.expected_skill}"}
        """,
    )
    assert plan_warnings(resolved([path])) == []


def test_scripted_model_without_a_script(tmp_path: Path) -> None:
    experiment = "experiment_id: e\nvariants: [{variant_id: s, agent: {kind: oracle, model: scripted}}]\n"
    found = warnings_for(tmp_path, experiment)
    message = (
        "variant 's': agent.model is 'scripted' but task {!r} has no scripted block: its episodes would be"
    )
    assert found == [message.format("a") + " invalid", message.format("b") + " invalid"]


def test_replacement_matching_no_prompt(tmp_path: Path) -> None:
    experiment = (
        "experiment_id: e\nvariants:\n  - variant_id: v\n"
        "    prompt_mutations: {replace: [{find: 'write ok', replace: 'put ok'}, {find: typo, replace: x}]}\n"
    )
    assert warnings_for(tmp_path, experiment) == [
        "variant 'v': prompt_mutations.replace 'typo' matches no selected task's prompt"
    ]


def test_auto_falling_back_to_tempdir_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def unavailable() -> str:
        return "bwrap is not installed"

    monkeypatch.setattr("coder_eval.sandbox.bwrap_problem", unavailable)
    experiment = "experiment_id: e\nvariants: [{variant_id: v}]\n"

    found = warnings_for(tmp_path, experiment)

    assert any("not a security boundary" in w and "not installed" in w for w in found)


def test_turn_timeout_that_ends_every_turn_before_task_timeout(tmp_path: Path) -> None:
    """``run_limits.turn_timeout`` arrives with the run-limit work; a stand-in block plays it here."""
    from dataclasses import replace
    from types import SimpleNamespace

    resolution = resolved([two_tasks(tmp_path)])
    assert not [w for w in plan_warnings(resolution) if "turn_timeout" in w]
    limits = SimpleNamespace(turn_timeout=60.0, task_timeout=600.0)
    plans = [replace(p, task=p.task.model_copy(update={"run_limits": limits})) for p in resolution.plans]
    found = plan_warnings(replace(resolution, plans=plans))
    assert (
        "task 'a': run_limits.turn_timeout (60 s) x 1 turn(s) ends the episode before task_timeout (600 s)"
        in ("\n".join(found))
    )
    limits.turn_timeout = 600.0
    assert not [w for w in plan_warnings(replace(resolution, plans=plans)) if "turn_timeout" in w]


def environment_task(tmp_path: Path, sandbox: str, extra: str = "") -> list[TaskSpec]:
    body = f"task_id: boxed\ninitial_prompt: p\nsandbox: {sandbox}\n{extra}"
    body += "success_criteria: [{type: file_exists, path: x}]\n"
    return load_tasks([write_task(tmp_path, body)])


@pytest.mark.docker
def test_a_named_image_that_is_not_here_is_refused_with_what_to_do(tmp_path: Path) -> None:
    tasks = environment_task(tmp_path, "{driver: docker, docker: {image: 'local/coder-eval-absent:1'}}")

    with pytest.raises(
        InputError, match=r"task 'boxed' .* the image 'local/coder-eval-absent:1', which is not"
    ):
        check_environments(tasks)
    (tmp_path / "Dockerfile").write_text("FROM coder-eval/base\nWORKDIR /app\n")
    check_environments(environment_task(tmp_path, "{driver: docker, docker: {dockerfile_path: Dockerfile}}"))


@pytest.mark.parametrize(
    ("sandbox", "problem"),
    [
        ("{driver: tempdir, workdir: /app}", "cannot show the workspace at /app where"),
        ("{driver: tempdir, scratch_dirs: [/logs]}", "cannot show /logs where"),
        ("{driver: bwrap, workdir: /usr/src/app}", "/usr/src/app overlaps /usr"),
    ],
)
def test_container_paths_a_driver_cannot_show_are_refused(tmp_path: Path, sandbox: str, problem: str) -> None:
    if "bwrap" in sandbox and BWRAP_PROBLEM is not None:
        pytest.skip(f"bwrap unavailable: {BWRAP_PROBLEM}")
    with pytest.raises(InputError, match=re.escape(problem)):
        check_environments(environment_task(tmp_path, sandbox))


def test_auto_falling_back_to_tempdir_refuses_container_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tests").mkdir()
    monkeypatch.setattr(checks, "resolve_driver", fake_resolve_driver)
    problems = asyncio.run(
        environment_problems(
            environment_task(tmp_path, "{}", "hidden_tests: {path: tests, mount_point: /tests}\n")
        )
    )
    assert (
        len(problems) == 1
        and "the tempdir driver runs in a host folder and cannot show /tests" in problems[0]
    )


async def fake_resolve_driver(name: str) -> tuple[str, str | None]:
    return "tempdir", "bubblewrap cannot run here"
