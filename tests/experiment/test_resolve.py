"""Resolution: variants over tasks, provenance into the trajectory, selection, sampling and splits."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from coder_eval.episode.runner import run_episode
from coder_eval.errors import ExperimentError, TaskError
from coder_eval.experiment import CommandLine, Selection
from coder_eval.trajectory import read_trajectory
from tests.experiment.builders import resolved, two_tasks, word_dataset, write_experiment
from tests.helpers import write_task

AB = """
experiment_id: ab
description: oracle against doing nothing
defaults: {agent: {kind: command, command: "echo ok > ok.txt", model: base-model}, run_limits: {max_turns: 4}}
variants:
  - variant_id: base
  - variant_id: cand
    agent: {model: cand-model, env: {MODE: fast}}
    repeats: 2
    prompt_mutations: {suffix: " Quickly."}
"""


def test_variants_pair_on_tasks_and_interleave(tmp_path: Path) -> None:
    tasks = two_tasks(tmp_path)
    resolution = resolved([tasks], write_experiment(tmp_path, AB))
    assert [p.episode_id for p in resolution.plans] == [
        "a--base--r0",
        "a--cand--r0",
        "a--cand--r1",
        "b--base--r0",
        "b--cand--r0",
        "b--cand--r1",
    ]
    assert resolution.repeats == {"base": 1, "cand": 2}
    cand = resolution.plans[1].task
    agent = cand.agent
    assert (agent.kind, agent.model) == ("command", "cand-model")
    assert getattr(agent, "env", None) == {"MODE": "fast"}
    assert cand.prompt == "write ok to ok.txt Quickly."
    assert resolution.plans[0].task.prompt == "write ok to ok.txt"


def test_provenance_names_the_layer_of_each_field(tmp_path: Path) -> None:
    tasks = two_tasks(tmp_path)
    command_line = CommandLine(defines=("run_limits.task_timeout=30",), repeats=3)
    plan = resolved([tasks], write_experiment(tmp_path, AB), command_line).plans[1]
    prov = plan.provenance
    assert prov["agent.type"] == "experiment"
    assert prov["run_limits.max_turns"] == "experiment"
    assert prov["success_criteria"] == prov["task_id"] == "task"
    assert prov["agent.model"] == prov["agent.env.MODE"] == prov["initial_prompt"] == "variant:cand"
    assert prov["run_limits.task_timeout"] == prov["repeats"] == "cli"
    assert prov["agent.prompt_on_stdin"] == "builtin"


def test_task_fields_win_over_experiment_defaults(tmp_path: Path) -> None:
    from tests.helpers import minimal_task

    path = minimal_task(tmp_path, "t", extra="agent: {kind: none}\n")
    plan = resolved([path], write_experiment(tmp_path, AB)).plans[0]
    assert plan.task.agent.kind == "none"
    assert plan.provenance["agent.type"] == "task"


def test_cli_repeats_override_every_variant(tmp_path: Path) -> None:
    resolution = resolved([two_tasks(tmp_path)], write_experiment(tmp_path, AB), CommandLine(repeats=3))
    assert resolution.repeats == {"base": 3, "cand": 3}
    assert len(resolution.plans) == 12


def test_provenance_and_resolved_task_reach_episode_start(tmp_path: Path) -> None:
    plan = resolved([two_tasks(tmp_path)], write_experiment(tmp_path, AB)).plans[1]
    path = tmp_path / "ep.jsonl"
    end = asyncio.run(run_episode(plan, "run", path))
    start = read_trajectory(path).start
    assert end.outcome == "pass" and start is not None
    assert start.provenance == plan.provenance
    assert start.task["agent"]["model"] == "cand-model"
    assert start.task["initial_prompt"].endswith("Quickly.")


def test_variant_template_sources_append_to_the_task(tmp_path: Path) -> None:
    (tmp_path / "task_files").mkdir()
    (tmp_path / "plugin" / "skills" / "s").mkdir(parents=True)
    task = write_task(
        tmp_path / "tasks",
        """
        task_id: t
        initial_prompt: p
        sandbox: {template_sources: [{template_dir: ../task_files}]}
        success_criteria: [{type: file_exists, path: x}]
        """,
    )
    experiment = write_experiment(
        tmp_path,
        "experiment_id: e\nvariants:\n  - variant_id: v\n"
        "    template_sources: [{template_dir: plugin, target: p}]\n",
    )
    plan = resolved([task], experiment).plans[0]
    dirs = [getattr(s, "path", None) for s in plan.task.sandbox.template_sources]
    assert dirs == [str((tmp_path / "task_files").resolve()), str((tmp_path / "plugin").resolve())]
    assert plan.provenance["sandbox.template_sources[1].mount_point"] == "variant:v"


def test_experiment_tasks_are_used_without_paths(tmp_path: Path) -> None:
    two_tasks(tmp_path)
    experiment = write_experiment(tmp_path, "experiment_id: e\ntasks: [tasks]\nvariants: [{variant_id: v}]\n")
    assert resolved([], experiment).task_ids == ["a", "b"]


def test_no_paths_and_no_experiment_tasks(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match="give task files or folders"):
        resolved([])


def test_mutations_apply_after_dataset_substitution(tmp_path: Path) -> None:
    path = word_dataset(tmp_path)
    experiment = write_experiment(
        tmp_path,
        """
        experiment_id: e
        variants:
          - variant_id: v
            prompt_mutations: {replace: [{find: 'w(\\d)', replace: 'word-\\1', regex: true}]}
        """,
    )
    plan = resolved([path], experiment).plans[0]
    assert plan.task.prompt == "Write word-0 to out.txt"


def test_sample_is_reproducible_and_independent_of_path_order(tmp_path: Path) -> None:
    from tests.helpers import minimal_task

    for i in range(10):
        minimal_task(tmp_path / "suite", f"t{i}")
    files = sorted((tmp_path / "suite").glob("*.yaml"))
    first = resolved([tmp_path / "suite"], selection=Selection(sample_tasks=4)).task_ids
    again = resolved(list(reversed(files)), selection=Selection(sample_tasks=4)).task_ids
    assert len(first) == 4 and sorted(first) == sorted(again)
    assert len(resolved([tmp_path / "suite"], selection=Selection(sample_tasks=50)).task_ids) == 10


def test_sample_per_stratum_counts_and_reproducibility(tmp_path: Path) -> None:
    path = word_dataset(tmp_path, "")
    text = path.read_text().replace(
        "dataset:\n", "dataset:\n  sample_per_stratum: 2\n  stratify_field: kind\n"
    )
    path.write_text(text)
    first = resolved([path])
    rows = [p.task.dataset_row for p in first.plans]
    assert sorted(r["kind"] for r in rows if r) == ["k1", "k1", "k2", "k2"]
    assert resolved([path]).task_ids == first.task_ids


def test_stratify_field_alone_samples_nothing(tmp_path: Path) -> None:
    path = word_dataset(tmp_path)
    everything = len(resolved([path]).task_ids)
    path.write_text(path.read_text().replace("dataset:\n", "dataset:\n  stratify_field: kind\n"))
    assert len(resolved([path]).task_ids) == everything


def test_sample_seed_changes_the_sample_and_keeps_it_reproducible(tmp_path: Path) -> None:
    path = word_dataset(tmp_path, "")
    base = path.read_text()

    def sample(seed: int) -> list[str]:
        extra = f"dataset:\n  sample_per_stratum: 1\n  stratify_field: kind\n  sample_seed: {seed}\n"
        path.write_text(base.replace("dataset:\n", extra))
        return resolved([path]).task_ids

    seeds = {tuple(sample(seed)) for seed in range(8)}
    assert len(seeds) > 1 and sample(3) == sample(3)


def test_split_from_the_command_line_keeps_plain_tasks(tmp_path: Path) -> None:
    from tests.helpers import minimal_task

    minimal_task(tmp_path / "data", "plain")
    word_dataset(tmp_path)
    ids = resolved([tmp_path / "data"], selection=Selection(split="test")).task_ids
    assert ids == ["plain", "words.r0", "words.r2", "words.r4"]


def test_split_in_the_file_with_a_custom_field(tmp_path: Path) -> None:
    path = word_dataset(tmp_path)
    path.write_text(path.read_text().replace("dataset:\n", "dataset:\n  split: k2\n  split_field: kind\n"))
    assert resolved([path]).task_ids == ["words.r4", "words.r5"]


def test_unknown_split_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    path = word_dataset(tmp_path)
    with pytest.raises(TaskError, match=r"no row has split='tset' \(did you mean 'test'\?\); splits present"):
        resolved([path], selection=Selection(split="tset"))


def test_selecting_zero_tasks_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match=r"no task selected .*0 tagged nothing"):
        resolved([two_tasks(tmp_path)], selection=Selection(tags=("nothing",)))


def test_tags_select_any_of(tmp_path: Path) -> None:
    assert resolved([two_tasks(tmp_path)], selection=Selection(tags=("y", "z"))).task_ids == ["b"]


def test_task_errors_from_every_file_are_reported_together(tmp_path: Path) -> None:
    write_task(tmp_path, "task_id: a\ninitial_prompt: p\nsuccess_criteria: []\n", "a.yaml")
    write_task(tmp_path, "task_id: b\ninitial_prompt: p\nsucess_criteria: []\n", "b.yaml")
    with pytest.raises(TaskError) as caught:
        resolved([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert "a.yaml:3" in str(caught.value) and "did you mean 'success_criteria'" in str(caught.value)


def test_suite_thresholds_make_a_suite_of_the_selected_rows(tmp_path: Path) -> None:
    path = word_dataset(tmp_path, "suite_thresholds: {0-file_contains: {pass_rate: 0.5}}\n")
    resolution = resolved([path], selection=Selection(split="train"))
    (suite,) = resolution.suites
    assert suite.name == "words" and suite.task_ids == ("words.r1", "words.r3", "words.r5")
    assert suite.thresholds == {"0-file_contains": {"pass_rate": 0.5}}


def test_suite_threshold_keys_are_checked(tmp_path: Path) -> None:
    path = word_dataset(tmp_path, "suite_thresholds: {file_contain: {recall: 0.5}}\n")
    with pytest.raises(TaskError, match="did you mean 'file_contains'"):
        resolved([path])


ORIGINAL_VARIANTS = """
experiment_id: original
defaults:
  agent: {kind: oracle}
  prompt_mutations: [{type: prefix, text: "[team] "}]
variants:
  - variant_id: plain
  - variant_id: rewritten
    driver: tempdir
    prompt_mutations:
      - {type: template, template: "Task: {prompt}"}
      - type: rephrase
        model: scripted
        scripted:
          turns:
            - blocks: [{tool_use: {name: submit_prompt, input: {prompt: "Put ok into ok.txt."}}}]
  - variant_id: own-prompt
    initial_prompt_file: prompts/short.md
"""


def test_original_variant_fields_prompts_and_rephrase_provenance(tmp_path: Path) -> None:
    import json

    tasks = two_tasks(tmp_path)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "short.md").write_text("ok -> ok.txt")
    resolution = resolved([tasks], write_experiment(tmp_path, ORIGINAL_VARIANTS))
    plans = {(p.task.task_id, p.variant_id): p for p in resolution.plans}
    assert plans["a", "plain"].task.prompt == "[team] write ok to ok.txt"
    rewritten = plans["a", "rewritten"]
    assert rewritten.task.prompt == "Put ok into ok.txt." and rewritten.task.sandbox.driver == "tempdir"
    record = json.loads(rewritten.provenance["prompt_mutations.rephrase[0]"])
    assert record["before"] == "Task: [team] write ok to ok.txt" and record["prompt"] == "Put ok into ok.txt."
    assert record["model"] == "scripted" and isinstance(record["seed"], int)
    assert rewritten.provenance["initial_prompt"] == "variant:rewritten"
    own = plans["a", "own-prompt"]
    assert own.task.prompt == "[team] ok -> ok.txt"
    assert own.provenance["initial_prompt_file"] == "variant:own-prompt"


def test_variant_simulation_is_merged_over_the_task(tmp_path: Path) -> None:
    write_task(
        tmp_path / "tasks",
        """
        task_id: chat
        initial_prompt: hi
        agent: {kind: oracle}
        simulation: {goal: get help, max_turns: 2}
        success_criteria: [{type: file_exists, path: x}]
        """,
    )
    body = "experiment_id: e\nvariants:\n  - variant_id: v\n    simulation: {max_turns: 4, persona: terse}\n"
    (plan,) = resolved([tmp_path / "tasks"], write_experiment(tmp_path, body)).plans
    assert plan.task.simulation is not None
    assert (plan.task.simulation.goal, plan.task.simulation.max_turns, plan.task.simulation.persona) == (
        "get help",
        4,
        "terse",
    )


def test_exclude_tags_include_skipped_and_driver(tmp_path: Path) -> None:
    tasks = two_tasks(tmp_path)
    from tests.helpers import minimal_task

    minimal_task(tasks, "c", extra="skip: quarantined\ntags: [x]\n")
    assert resolved([tasks]).task_ids == ["a", "b"]
    assert resolved([tasks], selection=Selection(include_skipped=True)).task_ids == ["a", "b", "c"]
    assert resolved([tasks], selection=Selection(exclude_tags=("x",), include_skipped=True)).task_ids == ["b"]
    with pytest.raises(ExperimentError, match=r"0 without x, y\)"):
        resolved([tasks], selection=Selection(exclude_tags=("x", "y")))
    plans = resolved([tasks], command_line=CommandLine(driver="tempdir")).plans
    assert {p.task.sandbox.driver for p in plans} == {"tempdir"} and plans[0].provenance[
        "sandbox.driver"
    ] == "cli"
