"""Experiment files: validated at load time with file, line, field and did-you-mean; paths checked."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from coder_eval.errors import ExperimentError
from coder_eval.experiment import default_experiment, load_experiment
from tests.experiment.builders import write_experiment
from tests.helpers import REPO


def load_error(path: Path) -> str:
    with pytest.raises(ExperimentError) as caught:
        load_experiment(path)
    return str(caught.value)


def test_loads_variants_in_order_with_layers(tmp_path: Path) -> None:
    (tmp_path / "plugin" / "skills" / "s").mkdir(parents=True)
    path = write_experiment(
        tmp_path,
        """
        experiment_id: ab
        description: does it help?
        defaults: {agent: {kind: oracle}, repeats: 2}
        variants:
          - variant_id: base
          - variant_id: cand
            agent: {model: m2}
            repeats: 3
            template_sources: [{template_dir: plugin, target: .plugins/p}]
        """,
    )
    experiment = load_experiment(path)
    assert experiment.variant_ids == ["base", "cand"]
    assert experiment.defaults == {"agent": {"kind": "oracle"}}
    assert experiment.repeats == 2
    cand = experiment.variants[1]
    assert cand.repeats == 3
    assert cand.layer["agent"] == {"model": "m2"}
    assert cand.layer["sandbox"]["template_sources"] == [
        {"path": str((tmp_path / "plugin").resolve()), "mount_point": ".plugins/p"}
    ]


def test_unknown_variant_field_names_line_and_suggests(tmp_path: Path) -> None:
    path = write_experiment(
        tmp_path, "experiment_id: e\nvariants:\n  - variant_id: a\n    agnet: {model: x}\n"
    )
    assert f"{path}:4: variants[0].agnet: unknown field (did you mean 'agent'?)" in load_error(path)


def test_unknown_nested_agent_field_suggests(tmp_path: Path) -> None:
    path = write_experiment(
        tmp_path, "experiment_id: e\nvariants:\n  - variant_id: a\n    agent: {modle: x}\n"
    )
    assert "variants[0].agent: unknown agent field 'modle' (did you mean 'model'?)" in load_error(path)


def test_unknown_top_level_and_defaults_fields(tmp_path: Path) -> None:
    path = write_experiment(
        tmp_path, "experiment_id: e\ndefault: {}\nvariants: [{variant_id: a}]\n", name="top.yaml"
    )
    assert "default: unknown field (did you mean 'defaults'?)" in load_error(path)
    path = write_experiment(
        tmp_path, "experiment_id: e\ndefaults: {run_limit: {}}\nvariants: [{variant_id: a}]\n"
    )
    assert "defaults.run_limit: unknown field (did you mean 'run_limits'?)" in load_error(path)


def test_duplicate_variant_ids(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, "experiment_id: e\nvariants: [{variant_id: a}, {variant_id: a}]\n")
    assert "variant ids must be unique" in load_error(path)


def test_no_variants(tmp_path: Path) -> None:
    path = write_experiment(tmp_path, "experiment_id: e\nvariants: []\n")
    assert "variants: List should have at least 1 item" in load_error(path)


def test_invalid_regex_in_prompt_replace(tmp_path: Path) -> None:
    path = write_experiment(
        tmp_path,
        """
        experiment_id: e
        variants:
          - variant_id: a
            prompt_mutations: {replace: [{find: "(open", regex: true}]}
        """,
    )
    assert "invalid regex '(open'" in load_error(path)


def test_missing_paths_are_named_relative_to_the_experiment(tmp_path: Path) -> None:
    path = write_experiment(
        tmp_path,
        """
        experiment_id: e
        tasks: [no_tasks_here]
        variants:
          - variant_id: a
            template_sources: [{template_dir: no_plugin}]
            scripted: no_script.yaml
        """,
    )
    message = load_error(path)
    assert f"{path}:2: tasks.0: 'no_tasks_here' not found" in message
    assert f"{path}:5: variants.0.template_sources.0.path: 'no_plugin' not found" in message
    assert "variants.0.scripted: 'no_script.yaml' not found" in message
    assert "relative to the experiment file" in message


def test_tasks_resolve_relative_to_the_experiment(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    path = write_experiment(
        tmp_path / "experiments", "experiment_id: e\ntasks: [../suite]\nvariants: [{variant_id: a}]\n"
    )
    assert load_experiment(path).tasks == ((tmp_path / "suite").resolve(),)


def test_default_yaml_matches_the_built_in_default() -> None:
    data = yaml.safe_load((REPO / "experiments" / "default.yaml").read_text())
    built_in = default_experiment()
    assert data["experiment_id"] == built_in.experiment_id
    assert [v["variant_id"] for v in data["variants"]] == built_in.variant_ids == ["default"]
    assert load_experiment(REPO / "experiments" / "default.yaml").variants == built_in.variants


def test_original_variant_fields_are_checked_at_load(tmp_path: Path) -> None:
    body = """
    experiment_id: e
    variants:
      - variant_id: a
        simulation: {persona: x, max_turn: 3}
      - variant_id: b
        initial_prompt: hi
        initial_prompt_file: p.md
      - variant_id: d
        prompt_mutations: [{type: shout}]
    """
    error = load_error(write_experiment(tmp_path, body))
    assert (
        "experiment.yaml:4: variants[0].simulation: simulation.max_turn: unknown field (did you mean" in error
    )
    assert "experiment.yaml:5: variants[1]: give initial_prompt or initial_prompt_file, not both" in error
    assert "variants[2].prompt_mutations[0]: unknown type 'shout'; valid types: prefix, suffix" in error
    body = "experiment_id: e\nvariants:\n  - variant_id: c\n    prompt_mutations:\n"
    body += "      - {type: rephrase, model: scripted, scripted: missing.yaml}\n"
    error = load_error(write_experiment(tmp_path, body))
    assert "experiment.yaml:5: variants.0.prompt_mutations.0.scripted: 'missing.yaml' not found" in error


def test_name_resolves_to_experiments_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coder_eval.experiment import experiment_path

    monkeypatch.chdir(tmp_path)
    write_experiment(tmp_path / "experiments", "experiment_id: ab\nvariants: [{variant_id: v}]\n", "ab.yaml")
    assert experiment_path(Path("ab")) == Path("experiments/ab.yaml")
    assert load_experiment(experiment_path(Path("ab"))).experiment_id == "ab"
    assert experiment_path(Path("other.yaml")) == Path("other.yaml")
    with pytest.raises(ExperimentError, match=r"-e nope: no such file, and no experiments/nope\.yaml here"):
        experiment_path(Path("nope"))
