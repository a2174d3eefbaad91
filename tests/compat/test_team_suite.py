"""A skills A/B laid out as a team writes it (tests/compat/team/): the skills on the host beside the
suite as a bare skills root, a shared ``graders/`` module imported by a grader in the task folder,
``mock_path_dirs: [bin]`` shims, a trigger dataset and an A/B experiment. It plans unchanged, and on
Claude Code and OpenCode (the scripted model, offline) the skill loads in the with-skill arm only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coder_eval.agents.opencode.agent import opencode_binary
from coder_eval.criteria.grader_files import suite_folders
from coder_eval.experiment import load_experiment, resolve
from coder_eval.experiment.checks import plan_warnings
from coder_eval.experiment.skill_arms import skill_names
from coder_eval.trajectory import CriterionResult, read_trajectory
from tests.helpers import coder_eval

TEAM = Path(__file__).parent / "team"
AGENTS = [
    "claude-code",
    pytest.param("opencode", marks=pytest.mark.skipif(opencode_binary() is None, reason="make setup")),
]


def test_it_plans_unchanged_offering_the_skill_in_the_with_skill_arm_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")  # the suite names a real model; only its key warns
    resolution = resolve(load_experiment(TEAM / "experiments" / "skills_ab.yaml"), [])

    offered = {(p.task.task_id, p.variant_id): skill_names(p.task) for p in resolution.plans}
    assert all(not names for (_, arm), names in offered.items() if arm == "baseline")
    assert all(names == ["release-drafts"] for (_, arm), names in offered.items() if arm == "with-skill")
    assert len(offered) == 8 and plan_warnings(resolution) == []
    release = next(p.task for p in resolution.plans if p.task.task_id == "team-release-notes")
    assert TEAM / "graders" in suite_folders(release.grader_sources())


def test_a_with_skill_arm_whose_folder_holds_no_skill_is_refused_at_plan_time(tmp_path: Path) -> None:
    shutil.copytree(TEAM, tmp_path / "team")
    experiment = tmp_path / "team" / "experiments" / "skills_ab.yaml"
    experiment.write_text(experiment.read_text().replace("path: ../skills}", "path: ../graders}"))

    result = coder_eval("plan", "-e", str(experiment), cwd=tmp_path)

    assert result.returncode == 2, result.stdout + result.stderr
    assert "variant 'with-skill' is meant to differ from the baseline 'baseline' only by its skills" in (
        " ".join((result.stdout + result.stderr).split())
    )


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_the_skill_loads_in_the_with_skill_arm_only(tmp_path: Path, agent: str) -> None:
    shutil.copytree(TEAM, tmp_path / "team")
    args = ["run", "-e", "experiments/skills_ab.yaml", "--model", "scripted", "--agent", agent, "-j", "2"]

    result = coder_eval(*args, "--no-report", cwd=tmp_path / "team", timeout=1200)

    assert result.returncode == 0, result.stdout + result.stderr
    evidence = {"claude-code": "claude-code init message", "opencode": "opencode debug skill"}[agent]
    assert "skills: baseline: none offered; invoked none" in result.stdout
    assert (
        "skills: with-skill: offered release-drafts (plugin skills) in 4 episodes; loaded release-drafts "
        f"in 4/4 ({evidence}); invoked release-drafts in 3/4"
    ) in result.stdout
    runs = tmp_path / "team" / "runs" / "latest" / "episodes"
    episodes = {p.stem: read_trajectory(p) for p in runs.glob("*.jsonl")}
    for name, trajectory in episodes.items():
        skills = trajectory.end.skills if trajectory.end else None
        assert skills is not None, name
        if "--with-skill--" in name:
            assert (skills.offered, skills.loaded, skills.loaded_plugins) == (["release-drafts"],) * 2 + (
                ["skills"],
            ), name
        else:
            assert (skills.offered, skills.loaded or [], skills.invoked) == ([], [], []), name
    release = {
        arm: [e for e in episodes[f"team-release-notes--{arm}--r0"].events if isinstance(e, CriterionResult)]
        for arm in ("baseline", "with-skill")
    }
    assert [c.passed for c in release["with-skill"]] == [True, True]
    assert [c.passed for c in release["baseline"]] == [False, False]
    assert "relnotes calls: ['--draft']" in release["with-skill"][0].details["output"]
