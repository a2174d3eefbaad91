"""The price table: list prices per million tokens, and the prices registered in code or by plugins.

A leaf of the package (it imports nothing of coder_eval), so the plugin loader can register prices
through it; ``coder_eval.pricing`` is where prices are looked up and costs computed.

Example: ``lookup("claude-haiku-4-5")`` -> ``Rates(1.0, 5.0, 1.25, 0.1)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

RATES_AS_OF = "2026-11-29"
"""When the table below was last checked against the published list prices."""


class Rates(NamedTuple):
    """USD per million tokens, by bucket."""

    input: float
    output: float
    cache_write: float
    cache_read: float


class ModelPricing(NamedTuple):
    """The original format's name for a price, field for field: USD per million tokens.

    Example: ``ModelPricing(2.0, 8.0, 2.5, 0.2)`` prices like ``Rates(2.0, 8.0, 2.5, 0.2)``.
    """

    input_per_mtok: float
    output_per_mtok: float
    cache_write_per_mtok: float
    cache_read_per_mtok: float


OPUS_4_5 = Rates(5.0, 25.0, 6.25, 0.50)
OPUS_4_0 = Rates(15.0, 75.0, 18.75, 1.50)
SONNET = Rates(3.0, 15.0, 3.75, 0.30)
HAIKU_4_5 = Rates(1.0, 5.0, 1.25, 0.10)
HAIKU_3_5 = Rates(0.80, 4.0, 1.0, 0.08)
HAIKU_3 = Rates(0.25, 1.25, 0.30, 0.03)
# OpenAI and Google: standard-tier list prices, prompts up to 200k tokens.
GPT_5 = Rates(1.25, 10.0, 1.25, 0.125)
GPT_5_MINI = Rates(0.25, 2.0, 0.25, 0.025)
GEMINI_2_5_PRO = Rates(1.25, 10.0, 1.25, 0.31)
GEMINI_2_5_FLASH = Rates(0.30, 2.50, 0.30, 0.075)

RATES: dict[str, Rates] = {
    "claude-opus-4-8": OPUS_4_5,
    "claude-opus-4-7": OPUS_4_5,
    "claude-opus-4-6": OPUS_4_5,
    "claude-opus-4-5": OPUS_4_5,
    "claude-opus-4-1": OPUS_4_0,
    "claude-opus-4-0": OPUS_4_0,
    "claude-opus-4": OPUS_4_0,
    "claude-sonnet-4-6": SONNET,
    "claude-sonnet-4-5": SONNET,
    "claude-sonnet-4-0": SONNET,
    "claude-sonnet-4": SONNET,
    "claude-haiku-4-5": HAIKU_4_5,
    "claude-3-7-sonnet": SONNET,
    "claude-3-5-sonnet": SONNET,
    "claude-3-5-haiku": HAIKU_3_5,
    "claude-3-opus": OPUS_4_0,
    "claude-3-haiku": HAIKU_3,
    "opus": OPUS_4_5,
    "sonnet": SONNET,
    "haiku": HAIKU_4_5,
    "gpt-5.1-codex": GPT_5,
    "gpt-5.1": GPT_5,
    "gpt-5-codex": GPT_5,
    "gpt-5": GPT_5,
    "gpt-5-mini": GPT_5_MINI,
    "gemini-2.5-pro": GEMINI_2_5_PRO,
    "gemini-2.5-flash": GEMINI_2_5_FLASH,
}
"""Normalised model id (see :func:`normalise_model`) -> rates. Aliases price as their current model."""

_SUFFIXES = re.compile(r"(\[1m\]|-latest|-v\d+(:\d+)?|-\d{8})$")


def normalise_model(model: str) -> str:
    """A model id with provider prefixes, dates, versions and context tags removed.

    Example: ``normalise_model("us.anthropic.claude-sonnet-4-5-20250929-v1:0")`` -> ``"claude-sonnet-4-5"``;
    ``normalise_model("openai/gpt-5.1-codex")`` -> ``"gpt-5.1-codex"``;
    ``normalise_model("claude-opus-4-1@20250805")`` -> ``"claude-opus-4-1"``.
    """
    name = model.strip().lower().split("@", 1)[0].rsplit("/", 1)[-1]
    start = name.find("claude-")
    if start > 0:
        name = name[start:]
    previous = None
    while previous != name:
        previous, name = name, _SUFFIXES.sub("", name)
    return name


PRICE_GROUP = "coder_eval.prices"
"""The entry-point group through which installed packages price their models."""
_registered: dict[str, Rates] = {}


Price = Rates | ModelPricing | Mapping[str, float] | tuple[float, ...]
"""What a price may be written as (see :func:`as_rates`)."""


def as_rates(price: Price) -> Rates:
    """A price as ``Rates``: ``Rates``, ``ModelPricing``, a 4-tuple, or
    ``{input, output[, cache_write, cache_read]}``.

    Example: ``as_rates({"input": 2, "output": 8})`` -> ``Rates(2.0, 8.0, 2.0, 2.0)``.
    """
    if isinstance(price, Mapping):
        unknown = set(price) - set(Rates._fields)
        if unknown or not {"input", "output"} <= set(price):
            raise ValueError(f"a price needs input and output (USD per million tokens), got {dict(price)}")
        rates = [float(price.get(name, price["input"])) for name in Rates._fields]
    else:
        rates = [float(value) for value in price]
    if len(rates) != len(Rates._fields) or any(rate < 0 or rate != rate for rate in rates):
        raise ValueError(f"a price is four rates >= 0 (input, output, cache_write, cache_read): {price}")
    return Rates(*rates)


def register_prices(prices: Mapping[str, Price], *, replace: bool = False) -> None:
    """Price models the table does not know. A model keeps one price: a different price for a model
    already priced (by the table or an earlier registration) is a ``ValueError`` and nothing of the
    batch is registered, unless ``replace`` says the replacement is meant.

    Example: ``register_prices({"acme-coder-1": {"input": 2.0, "output": 8.0}})``.
    """
    checked = {normalise_model(model): as_rates(price) for model, price in prices.items()}
    if not replace:
        for name, rates in checked.items():
            existing = _registered.get(name) or RATES.get(name)
            if existing is not None and existing != rates:
                source = "registered" if name in _registered else f"in the price table ({RATES_AS_OF})"
                raise ValueError(
                    f"model {name!r} is already {source} at {tuple(existing)} (USD per million tokens: "
                    f"input, output, cache write, cache read); refusing to shadow it with {tuple(rates)}: "
                    "two sources must not price one model differently (in code: replace=True)"
                )
    _registered.update(checked)


def register_pricing(rates: Mapping[str, Price]) -> None:
    """The original format's :func:`register_prices` (same rule; ``ModelPricing`` values).

    Example: ``register_pricing({"acme-coder-1": ModelPricing(2.0, 8.0, 2.0, 0.2)})``.
    """
    register_prices(rates)


def entry_point_prices(loaded: Any) -> dict[str, Rates]:
    """The prices a ``coder_eval.prices`` entry point gives: a mapping, or a function returning one."""
    prices = loaded() if callable(loaded) else loaded
    if not isinstance(prices, Mapping):
        raise ValueError(f"expected a mapping of model -> price, got {type(prices).__name__}")
    return {str(model): as_rates(price) for model, price in prices.items()}


def lookup(name: str) -> Rates | None:
    """The rates of a normalised model id: a registered price, else the table's, else None."""
    return _registered.get(name) or RATES.get(name)
