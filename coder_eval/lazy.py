"""A package's public names imported from their modules on first use (PEP 562's module
``__getattr__``), so that importing the package stays cheap: ``coder-eval --version`` imports no
runner, a run that computes no statistic imports no SciPy.

Example (a package's ``__init__.py``; the type checker reads the imports, Python the table)::

    if TYPE_CHECKING:
        from coder_eval.store.connection import RunStore

    LAZY = {"RunStore": "coder_eval.store.connection"}

    if not TYPE_CHECKING:
        __getattr__, __dir__ = lazy_names(__name__, globals(), LAZY)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

_ABSENT = object()


def lazy_names(
    package: str, namespace: dict[str, Any], table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__`` for ``table`` (name -> the module it comes
    from). A name is imported once, then kept in ``namespace`` (the package's ``globals()``); a name
    that is a submodule of its module (``plots`` of ``coder_eval.analysis.views``) is that module."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name, _ABSENT)
        if value is _ABSENT:
            value = importlib.import_module(f"{module}.{name}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # tab completion in a notebook lists the lazy names too
        return sorted({*namespace, *table})

    return __getattr__, __dir__


def without_iri_format() -> None:
    """Keep jsonschema's optional ``iri`` format check out of this process: importing it
    (``rfc3987_syntax``, which jupyter-events' dependencies install) builds a grammar, about 1 s of
    importing jsonschema, and so of nbformat (papermill, nbconvert, jupytext), Voila,
    claude-agent-sdk (through mcp) or a ``json_check`` criterion. Nothing coder_eval validates uses
    that format: notebooks, the viewer's event schemas, an MCP tool's input (validated without format
    checks), a task's JSON Schema (checked against its meta-schema, whose formats are URIs, and
    applied without format checks).

    Example: ``without_iri_format()`` before ``import jsonschema``; a no-op once jsonschema is imported.
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # import: ImportError
