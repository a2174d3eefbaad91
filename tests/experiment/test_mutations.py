"""Prompt mutations: vars, literal and regex replacements, prefix and suffix, in that order."""

from __future__ import annotations

import pytest

from coder_eval.errors import ExperimentError
from coder_eval.experiment import PromptMutations, mutate_prompt
from coder_eval.experiment.mutations import PromptReplace


def mutate(prompt: str, **fields: object) -> str:
    return mutate_prompt(prompt, PromptMutations.model_validate(fields)).prompt


def test_prefix_and_suffix() -> None:
    assert (
        mutate("Fix it.", prefix="Be careful. ", suffix="\nUse skills.") == "Be careful. Fix it.\nUse skills."
    )


def test_literal_replace_treats_pattern_characters_literally() -> None:
    assert mutate("a.b a.b", replace=[{"find": "a.b", "replace": "c"}]) == "c c"
    assert mutate("axb", replace=[{"find": "a.b", "replace": "c"}]) == "axb"


def test_regex_replace_with_groups() -> None:
    rule = {"find": r"(\d+) files", "replace": r"\1 documents", "regex": True}
    assert mutate("Sort 12 files", replace=[rule]) == "Sort 12 documents"


def test_vars_are_substituted() -> None:
    assert mutate("Deploy ${var.service} to ${var.env}", vars={"service": "web", "env": "staging"}) == (
        "Deploy web to staging"
    )


def test_order_is_vars_then_replace_then_prefix_and_suffix() -> None:
    prompt = mutate(
        "Use ${var.tool}",
        vars={"tool": "deployctl"},
        replace=[{"find": "deployctl", "replace": "the CLI"}, {"find": "PRE", "replace": "x"}],
        prefix="PRE: ",
    )
    assert prompt == "PRE: Use the CLI"


def test_undefined_var_is_an_error() -> None:
    with pytest.raises(ExperimentError, match=r"uses \$\{var.env\}.*defined: service"):
        mutate("Deploy to ${var.env}", vars={"service": "web"})


def test_replacements_that_match_nothing_are_reported() -> None:
    mutations = PromptMutations(replace=[PromptReplace(find="nope"), PromptReplace(find="Fix")])
    assert mutate_prompt("Fix it", mutations).unmatched == ["nope"]


def steps(*items: dict[str, object]) -> list[object]:
    from pydantic import TypeAdapter

    from coder_eval.experiment.mutations import PromptStep

    return [TypeAdapter(PromptStep).validate_python(item) for item in items]


def test_an_ordered_list_applies_in_its_own_order() -> None:
    mutations = steps(
        {"type": "suffix", "text": " now"},
        {"type": "template", "template": "Task: {prompt}\nBe careful."},
        {"type": "replace", "find": "careful", "replace": "quick"},
        {"type": "prefix", "text": ">> "},
    )
    assert mutate_prompt("Fix it", mutations).prompt == ">> Task: Fix it now\nBe quick."  # type: ignore[arg-type]


def test_template_placeholders_and_a_template_without_one() -> None:
    for template in ("[{prompt}]", "[{{ prompt }}]", "[${prompt}]"):
        assert mutate_prompt("a\\1", steps({"type": "template", "template": template})).prompt == "[a\\1]"  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"put \{prompt\} where the prompt goes"):
        steps({"type": "template", "template": "no placeholder"})


def test_defaults_then_variant_mutations() -> None:
    defaults = PromptMutations(vars={"x": "1"}, prefix="D:")
    variant = steps({"type": "suffix", "text": " ${var.x}"})
    assert mutate_prompt("p ${var.x}", defaults, variant).prompt == "D:p 1 ${var.x}"  # type: ignore[arg-type]


def test_a_rephrase_step_needs_a_model_to_run() -> None:
    rephrase = steps(
        {"type": "rephrase", "model": "scripted", "scripted": {"turns": [{"blocks": [submit("x")]}]}}
    )
    with pytest.raises(ExperimentError, match="rephrase step needs a model"):
        mutate_prompt("p", rephrase)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="give 'scripted' exactly when model is 'scripted'"):
        steps({"type": "rephrase", "model": "scripted"})


def submit(prompt: str) -> dict[str, object]:
    return {"tool_use": {"name": "submit_prompt", "input": {"prompt": prompt}}}


def test_rephrase_with_a_scripted_model_is_offline_seeded_and_cached() -> None:
    from coder_eval.experiment.rephrase import Rephraser

    script = {
        "turns": [
            {
                "when": {"request_contains": "Fix the add function"},
                "choose": [
                    {"weight": 1, "blocks": [submit("Repair add().")]},
                    {"weight": 1, "blocks": [submit("Make add() correct.")]},
                ],
            }
        ]
    }
    (step,) = steps({"type": "rephrase", "model": "scripted", "scripted": script, "temperature": 0.5})
    rephraser = Rephraser()
    seen = {rephraser.rewrite("Fix the add function.", step, seed) for seed in range(12)}  # type: ignore[arg-type]
    assert seen == {"Repair add().", "Make add() correct."}
    again = Rephraser()
    assert [again.rewrite("Fix the add function.", step, s) for s in range(12)] == [  # type: ignore[arg-type]
        rephraser.rewrite("Fix the add function.", step, s)
        for s in range(12)  # type: ignore[arg-type]
    ]


def test_rephrase_with_a_real_model_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from coder_eval.experiment.rephrase import Rephraser

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    (step,) = steps({"type": "rephrase"})
    with pytest.raises(ExperimentError, match="needs ANTHROPIC_API_KEY"):
        Rephraser().rewrite("p", step, 0)  # type: ignore[arg-type]


def test_a_rephrase_answer_without_the_tool_call_is_an_error() -> None:
    from coder_eval.experiment.rephrase import Rephraser

    (step,) = steps(
        {"type": "rephrase", "model": "scripted", "scripted": {"turns": [{"blocks": [{"text": "hi"}]}]}}
    )
    with pytest.raises(ExperimentError, match="did not call submit_prompt"):
        Rephraser().rewrite("p", step, 0)  # type: ignore[arg-type]
