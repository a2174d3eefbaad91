"""Model prices and cost: a dated table of list prices per million tokens.

Example::

    usage = Usage(input_tokens=1_000, output_tokens=500, cache_read_tokens=20_000)
    cost_usd("claude-sonnet-4-5-20250929", usage)   # 0.0165
    cost_usd("my-local-model", usage)               # None, with a warning

Prices are first-party list prices in USD per million tokens. Cache writes are priced at the
5-minute rate (``Usage`` has one cache-write bucket); long-context surcharges, batch and fast-mode
prices are not modelled. OpenAI and Google bill no cache writes (their caching is automatic), so
those rows price ``cache_creation_tokens`` as plain input; their cached input is ``cache_read``.
When an agent reports its own cost (Claude Code's ``total_cost_usd``), that figure is used and this
table is the fallback.

Plugins price their own models: in code with
``register_prices({"acme-coder-1": Rates(2.0, 8.0, 2.5, 0.2)})`` (or the original spelling,
``register_pricing({"acme-coder-1": ModelPricing(2.0, 8.0, 2.5, 0.2)})``), from an installed package
through the ``coder_eval.prices`` entry-point group, whose entries load to such a mapping or to a
function returning one (``[coder_eval.prices] acme = acme_models:PRICES``), or from a
``coder_eval.plugins`` hook (``registry.pricing(...)``, see ``coder_eval.plugins``). A price may also
be a mapping ``{input, output, cache_write, cache_read}`` (the cache rates default to the input rate).

One rule for all of them (anti-shadow): a model keeps one price. Registering the same price again
is harmless; a *different* price for a model the table or an earlier registration already prices is
a ``ValueError`` naming both, and nothing of that batch is registered, so the order in which plugins
load can never change what a model costs. Code that means to replace a price says so:
``register_prices({...}, replace=True)``. Every cost computation (agents, judges, budgets, timeouts)
looks prices up through :func:`rates_for`.
"""

from __future__ import annotations

import warnings

from coder_eval.plugins import load_prices
from coder_eval.price_table import (
    PRICE_GROUP,
    RATES,
    RATES_AS_OF,
    ModelPricing,
    Price,
    Rates,
    as_rates,
    entry_point_prices,
    lookup,
    normalise_model,
    register_prices,
    register_pricing,
)
from coder_eval.trajectory import Usage


def rates_for(model: str) -> Rates | None:
    """The rates of ``model``: a registered price (code, plugins), else the table, else None.

    Example: ``rates_for("claude-haiku-4-5-20251001")`` -> ``Rates(1.0, 5.0, 1.25, 0.1)``.
    """
    load_prices()  # the plugins' prices (a broken plugin's stay unknown, never wrong: check_plugins)
    return lookup(normalise_model(model))


def cost_usd(model: str | None, usage: Usage) -> float | None:
    """Cost of ``usage`` on ``model`` in USD; None (and a warning) when the model has no price.

    Example: ``cost_usd("claude-sonnet-4-5", Usage(input_tokens=1_000_000))`` -> ``3.0``.
    """
    rates = rates_for(model) if model else None
    if rates is None:
        warnings.warn(
            f"no price for model {model!r} in coder_eval.pricing (rates of {RATES_AS_OF}, or registered "
            f"with register_prices / the {PRICE_GROUP} entry points); cost unknown",
            stacklevel=2,
        )
        return None
    return (
        usage.input_tokens * rates.input
        + usage.output_tokens * rates.output
        + usage.cache_creation_tokens * rates.cache_write
        + usage.cache_read_tokens * rates.cache_read
    ) / 1_000_000


__all__ = [
    "PRICE_GROUP",
    "RATES",
    "RATES_AS_OF",
    "ModelPricing",
    "Price",
    "Rates",
    "as_rates",
    "cost_usd",
    "entry_point_prices",
    "normalise_model",
    "rates_for",
    "register_prices",
    "register_pricing",
]
