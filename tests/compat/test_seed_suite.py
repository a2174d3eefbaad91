"""A skills A/B laid out with its skills at the suite's root (tests/compat/seed/): ``.agents/skills/``
and ``skill-data/`` beside ``tasks/`` and ``experiments/``, named from that root by the experiment
(``plugins: [{path: .agents/skills}, {path: skill-data}]``) and run from there, as the original
coder_eval read such paths. It plans with one note per path, refuses a path found nowhere with the
file it came from and both places looked in, and on the real Claude Code CLI (the scripted model,
offline) loads the skills in the skill arm only."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from coder_eval.agents.skill_sources import PluginPathWarning
from coder_eval.errors import TaskError
from coder_eval.experiment import load_experiment, resolve
from coder_eval.experiment.checks import plan_warnings
from coder_eval.experiment.skill_arms import skill_names
from coder_eval.task import load_tasks
from coder_eval.trajectory import CriterionResult, read_trajectory
from tests.helpers import coder_eval

SEED = Path(__file__).parent / "seed"


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the suite, and the working directory at its root."""
    root = tmp_path / "seed"
    shutil.copytree(SEED, root)
    monkeypatch.chdir(root)
    return root


def test_plugin_paths_from_the_suite_root_resolve_there_with_one_note_each(suite: Path) -> None:
    resolution = resolve(load_experiment(Path("experiments/skills_ab.yaml")), [Path("tasks")])

    offered = {(p.variant_id, p.repeat): skill_names(p.task) for p in resolution.plans}
    assert {arm: offered[(arm, 0)] for arm in ("baseline", "with-skills")} == {
        "baseline": [],
        "with-skills": ["release-drafts", "release-style"],
    }
    with_skills = next(p.task for p in resolution.plans if p.variant_id == "with-skills")
    assert [p.path for p in with_skills.agent.plugins] == [  # type: ignore[union-attr]
        str(suite / ".agents" / "skills"),
        str(suite / "skill-data"),
    ]
    notes = [w for w in plan_warnings(resolution) if "working directory" in w]
    assert notes == [
        f"experiments/skills_ab.yaml:{line}: variants[1].agent.plugins[{i}]: {path!r} is not next to "
        f"experiments/skills_ab.yaml (no folder {suite / 'experiments' / path}); using {suite / path}, "
        "found from the working directory"
        for i, (line, path) in enumerate([(18, ".agents/skills"), (19, "skill-data")])
    ]


def test_a_plugin_path_next_to_the_experiment_wins_without_a_note(suite: Path) -> None:
    shutil.copytree(suite / "skill-data", suite / "experiments" / "skill-data")

    resolution = resolve(load_experiment(Path("experiments/skills_ab.yaml")), [Path("tasks")])

    with_skills = next(p.task for p in resolution.plans if p.variant_id == "with-skills")
    assert with_skills.agent.plugins[1].path == str(suite / "experiments" / "skill-data")  # type: ignore[union-attr]
    assert [n for n in resolution.notes if "skill-data" in n] == []


def test_a_path_found_nowhere_names_the_experiment_line_and_both_places(suite: Path) -> None:
    experiment = suite / "experiments" / "skills_ab.yaml"
    experiment.write_text(experiment.read_text().replace("{path: skill-data}", "{path: skill-datum}"))
    (suite / "tasks" / "copy.yaml").write_text(
        (suite / "tasks" / "release.yaml").read_text().replace("seed-release-notes", "seed-copy")
    )

    with pytest.raises(TaskError) as refused:
        resolve(load_experiment(Path("experiments/skills_ab.yaml")), [Path("tasks")])

    assert str(refused.value) == (  # once, though two task files merge the experiment
        f"experiments/skills_ab.yaml:19: variants[1].agent.plugins[1]: 'skill-datum' is neither next to "
        f"experiments/skills_ab.yaml (no folder {suite / 'experiments' / 'skill-datum'}) nor in the working "
        f"directory (no folder {suite / 'skill-datum'}), and no template source puts it in the workspace"
    )


def test_the_command_line_refuses_it_with_exit_2_and_no_traceback(suite: Path) -> None:
    experiment = suite / "experiments" / "skills_ab.yaml"
    experiment.write_text(experiment.read_text().replace("{path: .agents/skills}", "{path: .agent/skills}"))

    result = coder_eval("plan", "tasks", "-e", "skills_ab", "--model", "scripted", cwd=suite)

    assert result.returncode == 2, result.stdout + result.stderr
    said = " ".join(result.stderr.split())
    assert "experiments/skills_ab.yaml:18: variants[1].agent.plugins[0]: '.agent/skills' is neither" in said
    assert f"nor in the working directory (no folder {suite / '.agent' / 'skills'})" in said
    assert "Traceback" not in result.stderr


def test_a_task_file_path_from_the_root_is_used_and_a_missing_one_names_the_task(suite: Path) -> None:
    task = suite / "tasks" / "release.yaml"
    task.write_text(task.read_text() + "agent: {plugins: [.agents/skills]}\n")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (loaded,) = load_tasks([Path("tasks/release.yaml")])
    assert loaded.agent.plugins[0].path == str(suite / ".agents" / "skills")  # type: ignore[union-attr]
    assert [w.category for w in caught] == [PluginPathWarning]
    assert str(caught[0].message).startswith("tasks/release.yaml:19: agent.plugins[0]: '.agents/skills'")

    task.write_text(task.read_text().replace("[.agents/skills]", "[.agents/skill]"))
    with pytest.raises(
        TaskError,
        match=r"^tasks/release.yaml:19: agent.plugins\[0\]: '.agents/skill' is "
        r"neither next to tasks/release.yaml \(no folder .*/tasks/.agents/skill\) nor in the "
        r"working directory \(no folder .*/seed/.agents/skill\)",
    ):
        load_tasks([Path("tasks/release.yaml")])


@pytest.mark.slow
def test_the_skills_load_in_the_skill_arm_only_on_claude_code(suite: Path) -> None:
    args = ["run", "tasks", "-e", "skills_ab", "--model", "scripted", "-j", "2", "--no-report"]

    result = coder_eval(*args, cwd=suite, timeout=1200)

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.count("found from the working directory") == 2
    assert "skills: baseline: none offered; invoked none" in result.stdout
    episodes = {p.stem: read_trajectory(p) for p in (suite / "runs" / "latest" / "episodes").glob("*.jsonl")}
    assert len(episodes) == 6
    for name, trajectory in episodes.items():
        skills = trajectory.end.skills if trajectory.end else None
        assert skills is not None, name
        if "--with-skills--" in name:
            assert (
                sorted(skills.offered) == sorted(skills.loaded or []) == ["release-drafts", "release-style"]
            )
            assert skills.invoked == ["release-drafts"], name
        else:
            assert (skills.offered, skills.loaded or [], skills.invoked) == ([], [], []), name
        gate = next(e for e in trajectory.events if isinstance(e, CriterionResult))
        assert gate.passed == ("--with-skills--" in name), name
