from __future__ import annotations

from pathlib import Path

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


@pytest.fixture
def fresh_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    """No registered price and plugins not yet loaded (each test registers its own)."""
    import sys

    from coder_eval import plugins, price_table

    monkeypatch.setattr(price_table, "_registered", {})
    monkeypatch.setattr(plugins, "_state", None)
    monkeypatch.delitem(sys.modules, "acme_prices", raising=False)


def test_registered_prices_are_used(fresh_prices: None) -> None:
    from coder_eval.pricing import Rates, register_prices

    register_prices(
        {"acme-coder-1": {"input": 2.0, "output": 8.0}, "claude-sonnet-4-5": Rates(3, 15, 3.75, 0.3)}
    )
    assert cost_usd("acme-coder-1-20260101", Usage(input_tokens=1_000_000, output_tokens=500_000)) == 6.0
    assert rates_for("acme-coder-1") == (2.0, 8.0, 2.0, 2.0)
    register_prices({"acme-coder-1": (2.0, 8.0, 2.0, 2.0)})  # the same price again is harmless


def test_a_conflicting_price_is_refused_whole_unless_replace_is_meant(fresh_prices: None) -> None:
    from coder_eval.pricing import Rates, register_prices

    register_prices({"acme-coder-1": {"input": 2.0, "output": 8.0}})
    with pytest.raises(
        ValueError, match=r"'acme-coder-1' is already registered at \(2\.0, 8\.0, 2\.0, 2\.0\)"
    ):
        register_prices(
            {"acme-new": {"input": 1, "output": 1}, "acme-coder-1": {"input": 3.0, "output": 8.0}}
        )
    assert rates_for("acme-new") is None and rates_for("acme-coder-1") == (2.0, 8.0, 2.0, 2.0)
    with pytest.raises(ValueError, match=r"'claude-sonnet-4-5' is already in the price table"):
        register_prices({"claude-sonnet-4-5": Rates(1, 1, 1, 1)})
    register_prices({"claude-sonnet-4-5": Rates(1, 1, 1, 1)}, replace=True)
    assert cost_usd("claude-sonnet-4-5", Usage(output_tokens=1_000_000)) == 1.0


def test_the_original_register_pricing_takes_model_pricing(fresh_prices: None) -> None:
    from coder_eval.pricing import ModelPricing, register_pricing

    register_pricing({"acme-coder-2": ModelPricing(2.0, 8.0, 2.5, 0.2)})
    assert rates_for("acme-coder-2") == (2.0, 8.0, 2.5, 0.2)
    with pytest.raises(ValueError, match="refusing to shadow"):
        register_pricing({"acme-coder-2": ModelPricing(2.0, 9.0, 2.5, 0.2)})


@pytest.mark.parametrize(
    "price",
    [{"input": 1.0}, {"input": 1, "output": 2, "cache": 3}, (1.0, 2.0), (1, 2, 3, -1), {"input": "x"}],
)
def test_malformed_prices_are_refused(fresh_prices: None, price: object) -> None:
    from coder_eval.pricing import register_prices

    with pytest.raises(ValueError):
        register_prices({"m": price})  # type: ignore[dict-item]


def install_prices(folder: Path, body: str) -> None:
    """A package pricing its models through the ``coder_eval.prices`` entry-point group."""
    (folder / "acme_prices.py").write_text(body)
    info = folder / "acme_prices-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-prices\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[coder_eval.prices]\nacme = acme_prices:prices\n")


def test_entry_point_prices_reach_a_judges_cost(
    fresh_prices: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.criteria.builders import context, criterion, evaluate

    install_prices(tmp_path, "def prices():\n    return {'acme-judge': {'input': 1000.0, 'output': 0.0}}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    answer = {
        "tool_use": {"name": "submit_verdict", "input": {"score": 1, "passed": True, "rationale": "ok"}}
    }
    spec = criterion(
        {"type": "llm_judge", "rubric": "ok?", "model": "scripted", "votes": 1}
        | {"scripted": {"model": "acme-judge", "turns": [{"blocks": [answer]}]}}
    )
    (vote,) = evaluate(spec, context()).details["votes"]
    assert vote["model"] == "acme-judge" and vote["cost_usd"] == pytest.approx(vote["input_tokens"] / 1000)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("prices = {'acme-x': {'input': -1, 'output': 1}}\n", "a price is four rates >= 0"),
        ("prices = {'claude-haiku-4-5': {'input': 9, 'output': 9}}\n", "refusing to shadow"),
    ],
)
def test_a_broken_or_shadowing_price_plugin_is_named_and_prices_nothing(
    fresh_prices: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, problem: str
) -> None:
    from coder_eval.errors import PluginError
    from coder_eval.plugins import check_plugins

    install_prices(tmp_path, body)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert rates_for("acme-x") is None
    assert rates_for("claude-haiku-4-5") == (1.0, 5.0, 1.25, 0.1)
    with pytest.raises(
        PluginError, match=r"plugin 'acme' \(acme_prices:prices, package acme-prices 0\.1\)"
    ) as error:
        check_plugins()
    assert problem in str(error.value) and "Fix or uninstall the package" in str(error.value)
