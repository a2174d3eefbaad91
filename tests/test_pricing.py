from __future__ import annotations

import pytest

from coder_eval.pricing import RATES_AS_OF, cost_usd, normalise_model, rates_for
from coder_eval.trajectory import Usage


def test_known_model_is_priced_per_bucket() -> None:
    usage = Usage(
        input_tokens=1_000, output_tokens=500, cache_read_tokens=20_000, cache_creation_tokens=4_000
    )
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx((3_000 + 7_500 + 6_000 + 15_000) / 1e6)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("us.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
        ("claude-opus-4-1@20250805", "claude-opus-4-1"),
        ("claude-sonnet-4-5[1m]", "claude-sonnet-4-5"),
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
    ],
)
def test_dated_and_provider_ids_normalise(model: str, expected: str) -> None:
    assert normalise_model(model) == expected
    assert rates_for(model) is not None


def test_opus_generations_keep_their_own_price() -> None:
    assert rates_for("claude-opus-4-5-20251101") != rates_for("claude-opus-4-1-20250805")


def test_unknown_model_is_none_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="no price for model 'my-local-model'"):
        assert cost_usd("my-local-model", Usage(input_tokens=10)) is None


def test_a_new_minor_version_is_not_priced_as_its_family_base() -> None:
    with pytest.warns(UserWarning):
        assert cost_usd("claude-opus-4-99", Usage(input_tokens=10)) is None


def test_rates_are_dated() -> None:
    year, month, day = RATES_AS_OF.split("-")
    assert len(year) == 4 and len(month) == 2 and len(day) == 2


def test_openai_and_google_models_and_provider_prefixes_are_priced() -> None:
    from coder_eval.pricing import normalise_model, rates_for

    assert normalise_model("scripted/claude-sonnet-4-5") == "claude-sonnet-4-5"
    assert normalise_model("openai/gpt-5.1-codex") == "gpt-5.1-codex"
    assert rates_for("gpt-5.1-codex") is not None and rates_for("gemini-2.5-pro") is not None
