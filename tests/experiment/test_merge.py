"""The merge engine: layer order, each rule (replace, deep-merge, append), and provenance."""

from __future__ import annotations

import pytest

from coder_eval.experiment import MERGE_RULES, Layer, merge_layers, provenance
from coder_eval.experiment.overrides import field_at
from tests.helpers import REPO

LAYERS = ["experiment", "task", "variant:v", "cli"]


@pytest.mark.parametrize("top", range(len(LAYERS)))
def test_each_layer_wins_over_the_ones_below(top: int) -> None:
    layers = [Layer(name, {"agent": {"model": name}}) for name in LAYERS[: top + 1]]
    merged = merge_layers(layers)
    assert merged.data["agent"]["model"] == LAYERS[top]
    assert provenance(merged.data, merged.set_by)["agent.model"] == LAYERS[top]


def test_replace_rule_for_lists() -> None:
    merged = merge_layers(
        [
            Layer("task", {"agent": {"allowed_tools": ["Read", "Edit"]}, "success_criteria": [1, 2]}),
            Layer("variant:v", {"agent": {"allowed_tools": ["Bash"]}, "success_criteria": [3]}),
        ]
    )
    assert merged.data["agent"]["allowed_tools"] == ["Bash"]
    assert merged.data["success_criteria"] == [3]
    assert merged.set_by["agent.allowed_tools"] == "variant:v"


def test_deep_merge_rule_keeps_other_keys() -> None:
    merged = merge_layers(
        [
            Layer("experiment", {"agent": {"kind": "oracle", "env": {"A": "1", "B": "1"}}}),
            Layer("task", {"agent": {"env": {"B": "2"}}}),
            Layer("cli", {"agent": {"env": {"C": "3"}}}),
        ]
    )
    assert merged.data["agent"] == {"kind": "oracle", "env": {"A": "1", "B": "2", "C": "3"}}
    prov = provenance(merged.data, merged.set_by)
    assert prov["agent.kind"] == "experiment"
    assert (prov["agent.env.A"], prov["agent.env.B"], prov["agent.env.C"]) == ("experiment", "task", "cli")


def test_append_rule_itemises_provenance() -> None:
    merged = merge_layers(
        [
            Layer("experiment", {"pre_run": "setup"}),
            Layer("task", {"sandbox": {"template_sources": [{"template_dir": "/t"}]}, "pre_run": ["make"]}),
            Layer("variant:v", {"sandbox": {"template_sources": [{"template_dir": "/plugin"}]}}),
        ]
    )
    assert merged.data["sandbox"]["template_sources"] == [{"template_dir": "/t"}, {"template_dir": "/plugin"}]
    assert merged.data["pre_run"] == ["setup", "make"]
    prov = provenance(merged.data, merged.set_by)
    assert prov["sandbox.template_sources[0].template_dir"] == "task"
    assert prov["sandbox.template_sources[1].template_dir"] == "variant:v"
    assert (prov["pre_run[0]"], prov["pre_run[1]"]) == ("experiment", "task")


def test_unset_fields_are_builtin() -> None:
    merged = merge_layers([Layer("task", {"agent": {"kind": "oracle"}})])
    prov = provenance({"agent": {"kind": "oracle", "model": None}, "skip": False}, merged.set_by)
    assert prov == {"agent.kind": "task", "agent.model": "builtin", "skip": "builtin"}


def test_replacing_a_block_forgets_what_lower_layers_set_inside_it() -> None:
    merged = merge_layers(
        [Layer("task", {"scripted": {"turns": [1]}}), Layer("variant:v", {"scripted": "/s.yaml"})]
    )
    assert merged.set_by == {"scripted": "variant:v"}


def test_every_rule_names_a_task_field_and_is_documented() -> None:
    docs = (REPO / "docs" / "experiments.md").read_text()
    for path in MERGE_RULES:
        field_at(path)
        assert f"`{path}`" in docs, path


def test_layers_do_not_mutate_their_input() -> None:
    base = {"agent": {"env": {"A": "1"}}}
    merge_layers([Layer("task", base), Layer("cli", {"agent": {"env": {"B": "2"}}})])
    assert base == {"agent": {"env": {"A": "1"}}}


def test_rule_table_covers_each_list_and_mapping_field() -> None:
    from coder_eval.agents import AGENTS
    from coder_eval.sandbox import SandboxSpecBase
    from coder_eval.task import TaskSpec
    from coder_eval.task.limits import RunLimits

    blocks = [("", TaskSpec), ("sandbox.", SandboxSpecBase), ("run_limits.", RunLimits)]
    blocks += [("agent.", row.spec) for row in AGENTS.values()]
    for prefix, model in blocks:
        for name, info in model.model_fields.items():
            text = str(info.annotation)
            if ("list[" in text or "dict[" in text) and name not in {"dataset_row"}:
                assert f"{prefix}{name}" in MERGE_RULES, f"{prefix}{name} has no declared rule"


def test_simulation_block_deep_merges_so_one_override_keeps_the_persona() -> None:
    task = {
        "simulation": {"persona": "a busy PM", "goal": "a port", "constraints": ["terse"], "max_turns": 5}
    }
    merged = merge_layers(
        [Layer("task", task), Layer("cli", {"simulation": {"max_turns": 2, "constraints": []}})]
    )
    assert merged.data["simulation"] == {
        "persona": "a busy PM",
        "goal": "a port",
        "constraints": [],
        "max_turns": 2,
    }
    assert merged.set_by["simulation.max_turns"] == "cli" and merged.set_by["simulation.persona"] == "task"
