"""Plugins: criteria, agents and model prices from installed packages, found through entry points.

- ``coder_eval.criteria``: ``acme_check = "acme_eval.criteria:AcmeCheck"`` adds criterion kind
  ``acme_check``, a ``CriterionSpec`` subclass whose ``type`` is ``Literal["acme_check"]``;
- ``coder_eval.agents``: ``acme-echo = "acme_eval.agent:EchoAgent"`` adds agent kind ``acme-echo``
  (the class names its spec in ``Spec``; it is imported on first use);
- ``coder_eval.prices``: ``acme = "acme_eval.prices:PRICES"`` prices models (a mapping, or a function
  returning one; see ``coder_eval.pricing``);
- ``coder_eval.plugins``: ``acme = "acme_eval.plugin:register"``, a function ``register(registry)``
  that adds any of the three in code (the original format's plugin hook).

Example (a ``coder_eval.plugins`` hook)::

    def register(registry: Registry) -> None:
        registry.criterion(AcmeCheck)
        registry.agent("acme-echo", "acme_eval.agent:EchoAgent")
        registry.pricing({"acme-coder-1": ModelPricing(2.0, 8.0, 2.5, 0.2)})

Plugins load once per process, when ``coder_eval.criteria`` is first imported (it gives the built-in
names, ``Builtins``, that a plugin may not take): the task schema's criterion union is built from
the built-in table and the plugins' kinds then, so a plugin criterion is validated like a built-in
one (an unknown field is an error with a did-you-mean). Agents and prices read what was loaded; this
module imports none of the tables. A plugin module may import ``coder_eval.criteria``,
``coder_eval.agents``, ``coder_eval.pricing``, ``coder_eval.sandbox`` and this module, not
``coder_eval.task`` (it is being built from them).

**Anti-shadow.** A name or a price has one owner: a plugin criterion or agent kind named like a
built-in one, or like another plugin's with a different class, and a price that differs from the
table's or another plugin's, are refused (registering the same thing twice is harmless). **A broken
plugin is never skipped silently**: every problem is kept with the plugin's name, entry point and
package, and :func:`check_plugins` raises them as one ``PluginError``. ``load_tasks`` and the
experiment resolver call it, so a run with a broken plugin is refused (exit 2) before any sandbox
exists; the fix is to repair or uninstall the package named.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, NamedTuple, get_args

from coder_eval.errors import PluginError
from coder_eval.price_table import PRICE_GROUP, Price, entry_point_prices, register_prices

CRITERIA_GROUP = "coder_eval.criteria"
AGENTS_GROUP = "coder_eval.agents"
PLUGINS_GROUP = "coder_eval.plugins"
"""The group of ``register(registry)`` hooks (the original format's plugin hook)."""


class Builtins(NamedTuple):
    """What the criteria table hands the plugins: the built-in names no plugin may take (criterion
    kinds, the refused ones too, and agent kinds), and the class a plugin criterion must subclass."""

    criteria: Collection[str]
    agents: Collection[str]
    criterion_base: type[Any] = object
    """``coder_eval.criteria.CriterionSpec`` (given by the table, so this module imports none)."""


@dataclass
class Plugins:
    """What the installed plugins added, and what went wrong."""

    criteria: dict[str, type[Any]] = field(default_factory=dict)
    agents: dict[str, str | type[Any]] = field(default_factory=dict)
    """Agent kind -> ``"module:Class"`` (imported on first use) or the class."""
    owners: dict[str, str] = field(default_factory=dict)
    """``"criterion acme_check"`` / ``"agent acme-echo"`` -> the plugin that registered it."""
    problems: list[str] = field(default_factory=list)


def describe(point: EntryPoint) -> str:
    """``"'acme' (acme_eval.plugin:register, package acme-eval 0.1)"``: how errors name a plugin."""
    dist = getattr(point, "dist", None)
    package = f", package {dist.name} {dist.version}" if dist is not None else ""
    return f"{point.name!r} ({point.value}{package})"


class Registry:
    """What a ``coder_eval.plugins`` hook is given: ``register(registry)`` adds through its methods.

    Example: ``registry.criterion(AcmeCheck)``; ``registry.agent("acme-echo", "acme_eval.agent:EchoAgent")``;
    ``registry.pricing({"acme-coder-1": {"input": 2.0, "output": 8.0}})``.
    """

    def __init__(self, found: Plugins, source: str, builtins: Builtins) -> None:
        self._found = found
        self._source = source
        self._builtins = builtins

    def criterion(self, spec: type[Any]) -> None:
        """Add a criterion kind: a ``CriterionSpec`` subclass whose ``type`` is one ``Literal`` name."""
        kinds = get_args(getattr(spec, "model_fields", {}).get("type", _NO_TYPE).annotation)
        base = self._builtins.criterion_base
        if not (isinstance(spec, type) and issubclass(spec, base)) or len(kinds) != 1:
            raise TypeError(
                f"{spec!r} is not a criterion: subclass coder_eval.criteria.CriterionSpec and declare "
                "type: Literal['<your kind>'] = '<your kind>'"
            )
        kind = str(kinds[0])
        self._claim(f"criterion {kind}", kind in self._builtins.criteria, self._found.criteria, kind, spec)

    def agent(self, kind: str, implementation: str | type[Any]) -> None:
        """Add an agent kind: its class, or ``"module:Class"`` to import it on first use."""
        self._claim(f"agent {kind}", kind in self._builtins.agents, self._found.agents, kind, implementation)

    def pricing(self, rates: Mapping[str, Price]) -> None:
        """Price models (``ModelPricing``, ``Rates`` or ``{input, output, ...}``; ``coder_eval.pricing``)."""
        register_prices(rates)

    def _claim(self, name: str, builtin: bool, table: dict[str, Any], key: str, value: Any) -> None:
        if builtin:
            raise ValueError(f"{name} would shadow coder_eval's built-in {name}; give it another name")
        owner = self._found.owners.get(name)
        if key in table and table[key] != value:
            raise ValueError(f"{name} is already registered by plugin {owner}; two plugins claim one name")
        table[key] = value
        self._found.owners.setdefault(name, self._source)


class _NoType:
    annotation = None


_NO_TYPE = _NoType()

_state: Plugins | None = None
_loading: Plugins | None = None
_builtins: Builtins | None = None


def load_plugins(builtins: Builtins) -> Plugins:
    """Load every installed plugin once (``coder_eval.criteria`` calls this while it builds its table)."""
    global _state, _loading, _builtins
    _builtins = builtins
    if _state is not None:
        return _state
    if _loading is not None:  # a plugin module imported coder_eval while it was being loaded
        return _loading
    found = _loading = Plugins()
    try:
        for group, apply in APPLY.items():
            for point in entry_points(group=group):
                _load_one(found, point, builtins, apply)
    finally:
        _loading = None
    _state = found
    return found


def _criterion(registry: Registry, point: EntryPoint) -> None:
    spec = point.load()
    kinds = get_args(getattr(spec, "model_fields", {}).get("type", _NO_TYPE).annotation)
    if kinds and str(kinds[0]) != point.name:
        raise ValueError(f"the entry point's name is the kind: name it {kinds[0]!r}, the class's type")
    registry.criterion(spec)


def _agent(registry: Registry, point: EntryPoint) -> None:
    registry.agent(point.name, point.value)  # imported on first use, like a built-in agent


def _prices(registry: Registry, point: EntryPoint) -> None:
    registry.pricing(entry_point_prices(point.load()))


def _hook(registry: Registry, point: EntryPoint) -> None:
    register = point.load()
    if not callable(register):
        raise TypeError(f"the entry point should name a function register(registry), got {register!r}")
    register(registry)


APPLY: dict[str, Callable[[Registry, EntryPoint], None]] = {
    CRITERIA_GROUP: _criterion,
    AGENTS_GROUP: _agent,
    PRICE_GROUP: _prices,
    PLUGINS_GROUP: _hook,
}
"""Each entry-point group and what one of its entries adds, in loading order."""


def _load_one(
    found: Plugins, point: EntryPoint, builtins: Builtins, apply: Callable[[Registry, EntryPoint], None]
) -> None:
    """Load one entry point and apply it; a failure becomes a problem naming the plugin."""
    source = describe(point)
    try:
        apply(Registry(found, source, builtins), point)
    except Exception as exc:  # a third party's code: whatever it raises is reported, with its name
        found.problems.append(
            f"plugin {source} in {point.group} failed to load: {type(exc).__name__}: {exc}. "
            "Fix or uninstall the package that provides it"
        )


def plugins() -> Plugins:
    """The loaded plugins: none before ``coder_eval.criteria`` is imported (which loads them, giving
    the built-in names); loaded again with those names if the record was dropped (tests)."""
    if _loading is not None:
        return _loading
    if _state is None:
        return load_plugins(_builtins) if _builtins is not None else Plugins()
    return _state


def load_prices() -> None:
    """Make sure every plugin's prices are registered (``coder_eval.pricing`` asks before a lookup)."""
    plugins()


def check_plugins() -> None:
    """``PluginError`` listing every plugin that failed to load or shadows another (none: nothing)."""
    problems = plugins().problems
    if problems:
        raise PluginError("\n".join(problems))


def crash_text(name: str, exc: BaseException) -> str:
    """What a crash of criterion or agent ``name`` (``"criterion word_count"``) says: the exception,
    where it was raised, and the plugin that registered it, so an ``assert`` with no message still
    names its line.

    Example: ``"criterion word_count (plugin 'acme' (...)) raised AssertionError (no message) at
    acme_eval/criteria.py:21: assert words"``.
    """
    owner = plugins().owners.get(name)
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}: {frames[-1].line}" if frames else ""
    message = str(exc) or "(no message)"
    source = f" (plugin {owner})" if owner else ""
    return f"{name}{source} raised {type(exc).__name__}: {message}{where}"
