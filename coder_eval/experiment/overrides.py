"""Command-line overrides: ``-D path=value`` on any field of the resolved task.

Values are YAML scalars or flow collections (``-D run_limits.max_turns=5``,
``-D agent.allowed_tools=[Read,Edit]``, ``-D agent.env.DEBUG=1``). The path is checked against the
task schema, with a did-you-mean; the value against the field's type. ``--model M`` is
``-D agent.model=M``, ``--agent KIND`` (``--type``) is ``-D agent.type=KIND`` (``agent.kind`` is the
same field) and ``--driver D`` is ``-D sandbox.driver=D``; a field set by a shortcut and by ``-D`` at
once is an error (``command_line_layer``).

Example::

    overrides_layer(["agent.model=claude-haiku-4-5", "run_limits.max_turns=5"])
    # {"agent": {"model": "claude-haiku-4-5"}, "run_limits": {"max_turns": 5}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, get_args, get_origin

import yaml
from pydantic import AfterValidator, BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from coder_eval.agents import agent_kinds
from coder_eval.errors import ExperimentError, did_you_mean, unknown_name
from coder_eval.sandbox import DRIVERS
from coder_eval.task import RunLimits, SandboxSpec, TaskSpec

INTERNAL_FIELDS = frozenset({"source_path", "dataset_row"})
BLOCKS: dict[str, Any] = {"sandbox": SandboxSpec, "run_limits": RunLimits}
"""Blocks whose own validators run on what the overrides set in them (an agent block is checked
field by field: which kind's fields it may hold depends on the layers below)."""


def overrides_layer(defines: Sequence[str]) -> dict[str, Any]:
    """``["a.b=1", ...]`` -> a nested partial task; every path and value checked. Later ones win."""
    layer: dict[str, Any] = {}
    for define in defines:
        path, value = parse_define(define)
        path = _spelled(path)  # agent.kind and agent.type: one field, two spellings
        node = layer
        *parents, leaf = path.split(".")
        for part in parents:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[leaf] = value
    _check_blocks(layer)
    return layer


SHORTCUTS = {"--agent": "agent.type", "--model": "agent.model", "--driver": "sandbox.driver"}
"""The options that are shortcuts for one ``-D`` (``--type`` is ``--agent``'s other name)."""


def command_line_layer(defines: Sequence[str], shortcuts: Mapping[str, str | None]) -> dict[str, Any]:
    """``-D`` overrides and the shortcut options (``{"--model": "claude-haiku-4-5", ...}``) as one layer.

    A field set both by a shortcut and by ``-D`` is an ``ExperimentError`` (which one would win is not
    for the harness to guess); ``-D agent.kind`` and ``-D agent={...}`` count as setting ``agent.type``.

    Example: ``command_line_layer(["agent.model=a"], {"--model": "b"})`` raises ``ExperimentError``.
    """
    given = {flag: value for flag, value in shortcuts.items() if value is not None}
    defined = {_spelled(define.partition("=")[0].strip()) for define in defines}
    for flag in given:
        path = SHORTCUTS[flag]
        clash = next((d for d in defined if d == path or path.startswith(d + ".")), None)
        if clash is not None:
            raise ExperimentError(f"{path} is set both by {flag} and by -D {clash}=...; give it once")
    return overrides_layer([*defines, *(f"{SHORTCUTS[flag]}={value}" for flag, value in given.items())])


def _spelled(path: str) -> str:
    return "agent.type" if path == "agent.kind" else path


def _check_blocks(layer: dict[str, Any]) -> None:
    """Run each block's own validators (e.g. a known agent kind) on what the overrides set in it."""
    for name, model in BLOCKS.items():
        if isinstance(layer.get(name), dict):
            try:
                TypeAdapter(model).validate_python(layer[name])
            except ValidationError as exc:
                error = exc.errors()[0]
                where = ".".join([name, *map(str, error["loc"])])
                raise ExperimentError(f"-D {where}: {error['msg'].removeprefix('Value error, ')}") from exc


def parse_define(define: str) -> tuple[str, Any]:
    """``"run_limits.max_turns=5"`` -> ``("run_limits.max_turns", 5)``, checked against the schema."""
    path, sep, text = define.partition("=")
    path = path.strip()
    if not sep or not path:
        raise ExperimentError(f"-D {define!r}: expected path=value, e.g. -D agent.model=claude-sonnet-4-5")
    field = field_at(path)
    try:
        parsed = yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError as exc:
        raise ExperimentError(f"-D {path}: value {text!r} is not valid YAML: {exc}") from exc
    return path, _checked(path, field, parsed, text)


def field_at(path: str) -> Any:
    """The type of the task field at dotted ``path``; ExperimentError with a did-you-mean if none."""
    if path == "sandbox.driver":  # the union's discriminator: one of the drivers' names
        return Literal[tuple(DRIVERS)]
    if path in ("agent.type", "agent.kind"):  # the agent union's discriminator: a known kind
        return Annotated[str, AfterValidator(_known_kind)]
    model: type[BaseModel] = TaskSpec
    parts = path.split(".")
    for i, part in enumerate(parts):
        done = ".".join(parts[:i])
        fields = {k: v for k, v in model.model_fields.items() if k not in INTERNAL_FIELDS}
        if part not in fields:
            valid = [f"{done}.{f}" if done else f for f in fields]
            full = f"{done}.{part}" if done else part
            raise ExperimentError(
                f"-D {path}: unknown field {full}{did_you_mean(full, valid)}; valid: {', '.join(valid)}"
            )
        annotation = _annotated(fields[part])
        rest = parts[i + 1 :]
        if not rest:
            return annotation
        mapping = _mapping_value(fields[part].annotation)
        if mapping is not None and len(rest) == 1:
            return mapping
        nested = _model_in(fields[part].annotation, rest[0])
        if nested is None:
            raise ExperimentError(
                f"-D {path}: {'.'.join(parts[: i + 1])} has no sub-fields; set it whole, "
                f"e.g. -D {'.'.join(parts[: i + 1])}=[...]"
            )
        model = nested
    return model


def _known_kind(kind: str) -> str:
    if kind not in agent_kinds():
        raise ValueError(unknown_name("agent kind", kind, agent_kinds()))
    return kind


def _checked(path: str, annotation: Any, parsed: Any, text: str) -> Any:
    """The parsed value if the field accepts it, else the raw text if that fits (``-D env.X=1``)."""
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    try:
        adapter.validate_python(parsed)
        return parsed
    except ValidationError as exc:
        try:
            adapter.validate_python(text)
            return text
        except ValidationError:
            problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise ExperimentError(f"-D {path}={text}: {problem}") from exc


def _annotated(field: FieldInfo) -> Any:
    return Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation


def _mapping_value(annotation: Any) -> Any | None:
    for candidate in (annotation, *get_args(annotation)):
        if get_origin(candidate) is dict:
            return get_args(candidate)[1]
    return None


def _model_in(annotation: Any, wanted: str) -> type[BaseModel] | None:
    """The model a field holds; for a union of specs (``sandbox:``, ``agent:``), the first member that
    has the ``wanted`` sub-field, else the base class they share (so errors list the common fields)."""
    models = _models(annotation)
    if len(models) <= 1:
        return models[0] if models else None
    having = [m for m in models if wanted in m.model_fields]
    if having:
        return having[0]
    shared = [base for base in models[0].__mro__ if all(issubclass(m, base) for m in models)]
    return next((b for b in shared if issubclass(b, BaseModel) and b is not BaseModel), None)


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models(arg)]
