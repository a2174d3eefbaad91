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
