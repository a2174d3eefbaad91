"""YAML files that remember where each value came from, so errors can name the line.

Example::

    doc = read_yaml(Path("tasks/hello.yaml"))
    doc.data["success_criteria"][0]["path"]
    doc.line_of(("success_criteria", 0, "path"))   # -> 14
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, get_args

import yaml
from pydantic import BaseModel, ValidationError

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # a PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

from coder_eval.errors import InputError, did_you_mean
from coder_eval.file_kinds import not_readable

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class YamlDoc:
    """A parsed YAML mapping and the 1-based line of every key and item in it."""

    path: Path
    data: dict[str, Any]
    lines: dict[Loc, int] = field(default_factory=dict)

    def line_of(self, loc: Loc) -> int | None:
        """The line of the deepest known prefix of ``loc``."""
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.lines:
                return self.lines[loc[:end]]
        return None

    def where(self, loc: Loc) -> str:
        """``"path:line"`` for ``loc``."""
        line = self.line_of(loc)
        return f"{self.path}:{line}" if line else str(self.path)


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int]) -> None:
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = (*loc, str(key.value))
            lines[child] = key.start_mark.line + 1
            _walk(value, child, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*loc, index), lines)


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A key written twice in one mapping: ``line`` repeats the key first written at ``first_line``."""

    def __init__(self, key: Any, first: yaml.Node, again: yaml.Node) -> None:
        super().__init__(problem=f"duplicate key {key!r}", problem_mark=again.start_mark)
        self.key = key
        self.line = again.start_mark.line + 1
        self.first_line = first.start_mark.line + 1

    def explain(self, path: Path) -> str:
        """``"tasks/t.yaml:7: duplicate key 'x' (first at line 3); remove one"``."""
        return f"{path}:{self.line}: duplicate key {self.key!r} (first at line {self.first_line}); remove one"


class UniqueKeyLoader(_SafeLoader):
    """PyYAML's safe loader (libyaml's parser where PyYAML has it: a task suite's files parse about
    five times faster) that raises :class:`DuplicateKeyError` instead of letting the last key win.

    Keys brought in by a ``<<`` merge may still be overridden, as YAML intends.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: the base constructor reports it
                continue
            if first is not key_node:
                raise DuplicateKeyError(key, first, key_node)
        return super().construct_mapping(node, deep=deep)


class ParsedYaml(NamedTuple):
    """A YAML document as a node tree (for line numbers) and as Python data."""

    node: yaml.Node | None
    data: Any


class TooComplex(ValueError):
    """A YAML document nested too deep or expanding to too many values through aliases."""

    @classmethod
    def too_deep(cls, mark: yaml.Mark) -> TooComplex:
        """Nested deeper than ``MAX_DEPTH``, as found at ``mark``."""
        return cls(f"YAML nested deeper than {MAX_DEPTH} levels (line {mark.line + 1})")


def check_shape(node: yaml.Node) -> None:
    """Refuse a node tree deeper than ``MAX_DEPTH`` or larger than ``MAX_NODES`` once aliases are
    followed (a "billion laughs" document is small on disk and huge when expanded)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(node, 1, False)]
    while stack:
        current, depth, done = stack.pop()
        if depth > MAX_DEPTH:
            raise TooComplex.too_deep(current.start_mark)
        children = _children(current)
        if done:
            sizes[id(current)] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[id(current)] > MAX_NODES:
                raise TooComplex(f"YAML expands to more than {MAX_NODES:,} values through its aliases")
        elif id(current) not in sizes:
            stack.append((current, depth, True))
            stack.extend((child, depth + 1, False) for child in children if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def parse_yaml(text: str) -> ParsedYaml:
    """Parse one YAML document with :class:`UniqueKeyLoader`; raises ``yaml.YAMLError``, ``TooComplex``
    or ``RecursionError``."""
    loader = UniqueKeyLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            if exc.problem == LIBYAML_TOO_DEEP and exc.problem_mark is not None:
                raise TooComplex.too_deep(exc.problem_mark) from exc
            raise
        if node is not None:
            check_shape(node)
        return ParsedYaml(node, loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


MAX_BYTES = 10 * 1024 * 1024
"""A task, experiment or script file larger than this is refused before it is read."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and lists a file may have."""
MAX_NODES = 200_000
"""Most values a file may expand to once its aliases (``*name``) are followed."""
LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
"""libyaml's own words for a document nested past its limit (1,000 levels), which it refuses before
``check_shape`` sees it."""


def read_text_file(path: Path, *, kind: type[InputError] = InputError, what: str = "") -> str:
    """A UTF-8 text file of at most ``MAX_BYTES``; ``kind`` naming the file otherwise."""
    role = f" {what}" if what else ""
    problem = not_readable(path)
    if problem is not None and problem != "not found":  # a FIFO would block the read for ever
        raise kind(f"{path}: {problem}; cannot read it as a{role or ' YAML'} file")
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise kind(
                f"{path}: {size / 1024 / 1024:.1f} MB is more than a{role or ' YAML'} file may be "
                f"({MAX_BYTES // 1024 // 1024} MB); is it the right file?"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise kind(f"{path}: cannot read{role}: {exc.strerror or exc}") from exc
    if b"\0" in data[:8192]:
        raise kind(f"{path}: a binary file, not YAML text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise kind(f"{path}:{line}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from exc


def read_yaml(path: Path, *, kind: type[InputError] = InputError, what: str = "") -> YamlDoc:
    """Parse a YAML mapping, raising ``kind`` with the file and line on a syntax error or duplicate key.

    ``what`` names the file's role in messages: ``read_yaml(p, what="script")`` -> "cannot read script".
    Files that are too big, not UTF-8, nested too deep or that expand too far through aliases are
    refused with the reason.
    """
    text = read_text_file(path, kind=kind, what=what)
    try:
        node, data = parse_yaml(text)
    except DuplicateKeyError as exc:
        raise kind(exc.explain(path)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise kind(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from exc
    except (RecursionError, TooComplex) as exc:
        raise kind(
            f"{path}: {exc if isinstance(exc, TooComplex) else 'YAML nested too deep to read'}"
        ) from exc
    if not isinstance(data, dict):
        raise kind(
            f"{path}: a {what or 'YAML file'} must be a mapping of fields at the top level, "
            f"got {type(data).__name__}"
        )
    lines: dict[Loc, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return YamlDoc(path, data, lines)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """Pydantic models reachable in one step through Optional, Union, list, dict and Annotated."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in get_args(annotation):
        found.extend(_models_in(arg))
    return found


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The model that owns the last element of ``loc`` (pydantic's error location)."""
    current: type[BaseModel] | None = model
    pending: list[type[BaseModel]] = []
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        if pending:  # a discriminated-union tag: pick the member whose `type` literal matches
            current = next((m for m in pending if _tag_of(m) == part), None)
            pending = []
            if current is not None:
                continue
        if current is None or part not in current.model_fields:
            return None
        members = _models_in(current.model_fields[part].annotation)
        if len(members) == 1:
            current = members[0]
        elif members:
            pending = members
        else:
            return None
    return current


def _tag_of(model: type[BaseModel]) -> str | None:
    field = model.model_fields.get("type")
    args = get_args(field.annotation) if field else ()
    return str(args[0]) if args else None


def _dotted(loc: Loc, data: Any) -> tuple[str, Loc]:
    """Human path (``success_criteria[0].path``) and the data location (union tags dropped)."""
    text, data_loc, node = "", [], data
    for part in loc:
        if isinstance(part, int) and isinstance(node, list) and part < len(node):
            text, node = f"{text}[{part}]", node[part]
        elif isinstance(node, dict) and str(part) in node:
            text, node = f"{text}.{part}" if text else str(part), node[str(part)]
        elif isinstance(node, dict) and part == loc[-1]:
            text = f"{text}.{part}" if text else str(part)
        else:
            continue
        data_loc.append(part)
    return text or "(top level)", tuple(data_loc)


def _field_names(model: type[BaseModel]) -> list[str]:
    """A model's fields as a file may write them: each name, then its other spellings (aliases)."""
    names: list[str] = []
    for name, info in model.model_fields.items():
        if name == "type":
            continue
        names.append(name)
        choices = getattr(info.validation_alias, "choices", [])
        names += [c for c in choices if isinstance(c, str) and c != name]
    return names


def explain(exc: ValidationError, doc: YamlDoc, model: type[BaseModel], prefix: Loc = ()) -> str:
    """Turn a pydantic error into lines of ``file:line: field: problem``, with did-you-mean hints."""
    messages = []
    for error in exc.errors():
        loc = (*prefix, *error["loc"])
        field_text, data_loc = _dotted(loc, doc.data)
        problem = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            owner = _model_at(model, tuple(error["loc"]))
            valid = _field_names(owner) if owner else []
            problem = f"unknown field{did_you_mean(str(loc[-1]), valid)}"
            if valid:
                problem += f"; valid fields: {', '.join(valid)}"
        elif error["type"] == "union_tag_invalid":
            context = error.get("ctx") or {}
            tags = str(context.get("expected_tags", "")).replace("'", "").split(", ")
            problem = f"unknown type {context.get('tag')!r}{did_you_mean(str(context.get('tag')), tags)}"
            problem += f"; valid types: {', '.join(tags)}"
        messages.append(f"{doc.where(data_loc)}: {field_text}: {problem}")
    return "\n".join(messages)
