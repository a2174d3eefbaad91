"""``json_check``: a JSON file checked against a JSON Schema and JMESPath assertions.

Example::

    - type: json_check
      path: out/summary.json
      json_schema: schemas/summary.json        # a file of the workspace template (read from the suite
                                               # at load time), else of the task folder; or inline
      assertions:
        - {expression: total, operator: equals, expected: 3}
        - {expression: "items[?done] | length(@)", operator: gte, expected: 2}
        - {expression: owner, operator: type, expected: string}

Each assertion has an ``expression`` and an ``operator`` with its ``expected`` value: ``equals``,
``not_equals``, ``contains``, ``gt``, ``gte``, ``lt``, ``lte``, ``type`` (a JSON type name),
``regex`` (on the value as text) or ``exists`` (``expected`` defaults to true). The shorter spelling
``{expression, equals: 3}`` (also ``contains``, ``matches``, ``at_least``, ``at_most``, ``exists``)
loads to the same assertion. The score is the share of checks (schema, each assertion) that hold.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import jmespath
from jmespath.exceptions import JMESPathError
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from coder_eval.criteria.base import (
    CriterionFileError,
    GradingContext,
    JmesPath,
    OriginalCriterion,
    Verdict,
    check_regex,
    fraction,
    parse_json,
    read_texts,
)
from coder_eval.criteria.seen import seen_of, seen_text, seen_value
from coder_eval.errors import GraderError, WorkspaceFileError
from coder_eval.lazy import without_iri_format
from coder_eval.patterns import bounded, search
from coder_eval.sandbox.base import SandboxPath
from coder_eval.sandbox.spec import TemplateSource
from coder_eval.sandbox.template_files import template_file

Operator = Literal["equals", "not_equals", "contains", "gt", "gte", "lt", "lte", "type", "regex", "exists"]
SHORT_FORMS: dict[str, Operator] = {
    "equals": "equals",
    "contains": "contains",
    "matches": "regex",
    "at_least": "gte",
    "at_most": "lte",
    "exists": "exists",
}
"""Our shorter spelling: ``{equals: 3}`` is ``{operator: equals, expected: 3}``."""
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}
TYPE_ALIASES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "list": "array"}
TYPE_ALIASES |= {"dict": "object", "none": "null", "nonetype": "null"}


def _json_type(value: Any) -> str:
    name = str(value).strip().lower()
    name = TYPE_ALIASES.get(name, name)
    if name not in JSON_TYPES:
        raise ValueError(f"type {value!r} is not a JSON type; use one of {', '.join(JSON_TYPES)}")
    return name


class Assertion(BaseModel):
    """One JMESPath expression, an operator and the value it compares with."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    expression: JmesPath = Field(description="JMESPath expression.")
    operator: Operator = Field(description="How the value is compared with expected.")
    expected: Any = Field(default=None, description="The value compared with (exists: default true).")

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        given = [name for name in SHORT_FORMS if name in data]
        if "operator" in data:
            if given:
                raise ValueError(f"give either operator/expected or {given[0]!r}, not both")
            return data
        if len(given) != 1:
            raise ValueError(
                "give an operator and expected, or exactly one of equals, contains, matches, at_least, "
                f"at_most, exists; got {given}"
            )
        rest = {k: v for k, v in data.items() if k != given[0]}
        return {**rest, "operator": SHORT_FORMS[given[0]], "expected": data[given[0]]}

    @model_validator(mode="after")
    def _expected_fits(self) -> Assertion:
        if self.operator == "regex":
            check_regex(str(self.expected))
        elif self.operator == "type":
            _json_type(self.expected)
        elif self.operator in ("gt", "gte", "lt", "lte") and not _is_number(self.expected):
            raise ValueError(f"operator {self.operator} needs a number as expected, got {self.expected!r}")
        elif self.operator == "exists" and not isinstance(self.expected, bool | None):
            raise ValueError(f"operator exists takes true or false as expected, got {self.expected!r}")
        return self

    def holds(self, document: Any) -> bool:
        return self.judged(document).holds

    def judged(self, document: Any) -> Judged:
        """Whether the assertion holds on ``document``, and why not when no comparison was made."""
        value, error = self._search(document)
        if error is not None:
            return Judged(False)
        problem = out_of_range(value) if self.operator in ORDERING else None
        if problem is not None:
            return Judged(False, f"{self.expression}: {problem}; not compared")
        return Judged(compare(self.operator, value, self.expected))

    def mismatch(self, document: Any) -> str | None:
        """None when the assertion holds of ``document``; else what was found there, bounded and
        escaped: ``"found 25"``, ``"found nothing"``, ``"cannot be evaluated here: ..."``; ``""``
        when a number found cannot be compared (``judged`` says why)."""
        value, error = self._search(document)
        if error is not None:
            return f"cannot be evaluated here: {seen_text(error, 80)}"
        judged = self.judged(document)
        if judged.holds:
            return None
        if judged.problem is not None:
            return ""
        return "found nothing" if value is None else f"found {seen_value(value)}"

    def _search(self, document: Any) -> tuple[Any, str | None]:
        try:
            return jmespath.search(self.expression, document), None
        except JMESPathError as exc:  # a function applied to the wrong type in this document: not as expected
            return None, str(exc)

    @property
    def name(self) -> str:
        """``total equals 24``: the assertion as a failure names it."""
        return f"{self.expression} {self.operator} {self.expected!r}"


class Judged(NamedTuple):
    """An assertion's result on one document."""

    holds: bool
    problem: str | None = None


ORDERING = frozenset({"gt", "gte", "lt", "lte"})


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def out_of_range(value: Any) -> str | None:
    """Why a number found in a document cannot be ordered against a bound: past what a double holds
    (a JSON number, as most readers take it), or not finite; None for any other value.

    Example: ``out_of_range(10**400)`` -> ``"a 401-digit integer, past the range of a JSON number"``;
    ``out_of_range(3)`` -> None.
    """
    if not _is_number(value):
        return None
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer no double holds
        return f"a {len(str(abs(value)))}-digit integer, past the range of a JSON number"
    return None if finite else f"{value!r} is not a finite number"


def compare(operator: Operator, value: Any, expected: Any) -> bool:
    """``value`` (found in the document) against ``expected`` under ``operator``.

    Example: ``compare("gte", 3, 2)`` -> True; ``compare("type", [1], "array")`` -> True.
    """
    if operator in ("equals", "not_equals"):
        return bool(value == expected) == (operator == "equals")
    if operator == "contains":
        return isinstance(value, list | str | dict) and _contains(value, expected)
    if operator == "type":
        wanted = _json_type(expected)
        return isinstance(value, JSON_TYPES[wanted]) and not (wanted != "boolean" and isinstance(value, bool))
    if operator == "regex":
        return value is not None and search(str(expected), _as_text(value)) is not None
    if operator == "exists":
        return (value is not None) == (True if expected is None else bool(expected))
    if not _is_number(value) or out_of_range(value) is not None:
        return False
    ordered = {"gt": value > expected, "gte": value >= expected, "lt": value < expected}  # exact
    return bool(ordered.get(operator, value <= expected))


def _contains(value: list[Any] | str | dict[str, Any], expected: Any) -> bool:
    if isinstance(value, str):
        return isinstance(expected, str) and expected in value
    return expected in value


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _validator(schema: dict[str, Any]) -> Any:
    without_iri_format()
    import jsonschema

    return jsonschema.validators.validator_for(schema)(schema)


def check_schema(value: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema that is itself valid, else ``ValueError``."""
    without_iri_format()  # jsonschema's import, less its 1 s iri grammar (a format no check here uses)
    import jsonschema  # imported on use: it is slow to import, and most tasks need none

    try:
        jsonschema.validators.validator_for(value).check_schema(value)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"invalid JSON Schema: {exc.message}") from exc
    return value


def load_schema(path: Path) -> dict[str, Any]:
    """A JSON Schema file (the task author's), checked; ``ValueError`` naming the problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the JSON Schema {path}: {exc}") from exc
    return parse_schema(text, str(path))


def parse_schema(text: str, name: str) -> dict[str, Any]:
    """A JSON Schema's text, parsed and checked; ``ValueError`` naming ``name`` and the problem."""
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"cannot read the JSON Schema {name}: {exc}") from exc
    if not isinstance(schema, dict):
        raise ValueError(f"the JSON Schema {name} is not a JSON object")
    return check_schema(schema)


class JsonCheck(OriginalCriterion):
    type: Literal["json_check"] = "json_check"
    path: SandboxPath = Field(description="JSON file relative to the sandbox root.")
    json_schema: dict[str, Any] | str | None = Field(
        default=None,
        validation_alias=AliasChoices("json_schema", "schema"),
        description="JSON Schema: a workspace file the template sources hold, or one relative to the task "
        "file (read from the suite and checked at load time), or inline.",
    )
    assertions: list[Assertion] = Field(default_factory=list, description="JMESPath assertions.")

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | str | None) -> dict[str, Any] | str | None:
        return check_schema(value) if isinstance(value, dict) else value

    def with_task_files(self, task_dir: Path, sources: Sequence[TemplateSource]) -> JsonCheck:
        """With a schema file resolved and checked at load time: the pristine copy the template
        sources put at that workspace path (the original format reads the schema from the sandbox;
        read here from the suite, the agent cannot edit it), else the task author's file relative to
        the task folder. Inline starter-file content becomes the schema itself."""
        if not isinstance(self.json_schema, str):
            return self
        try:
            return self._schema_resolved(task_dir, sources)
        except ValueError as exc:
            raise CriterionFileError("json_schema", str(exc)) from exc

    def _schema_resolved(self, task_dir: Path, sources: Sequence[TemplateSource]) -> JsonCheck:
        assert isinstance(self.json_schema, str)
        origin = template_file(self.json_schema, sources)
        if origin is not None and origin.content is not None:
            return self.model_copy(update={"json_schema": parse_schema(origin.content, self.json_schema)})
        candidates = [origin.path] if origin is not None and origin.path is not None else []
        candidates.append(task_dir / self.json_schema)
        found = next((c.resolve() for c in candidates if c.is_file()), None)
        if found is None:
            looked = ", ".join(str(c) for c in candidates)
            raise ValueError(f"file {self.json_schema!r} not found (looked for {looked})")
        load_schema(found)
        return self.model_copy(update={"json_schema": str(found)})

    def schema_document(self, task_dir: Path) -> dict[str, Any] | None:
        """The schema: inline, or read from its file (relative to ``task_dir`` unless absolute)."""
        if not isinstance(self.json_schema, str):
            return self.json_schema
        try:
            return load_schema(task_dir / self.json_schema)
        except ValueError as exc:
            raise GraderError(str(exc)) from exc

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        schema = self.schema_document(ctx.task_dir)
        try:
            document = parse_json((await read_texts(ctx.sandbox, [self.path]))[0], self.path)
        except WorkspaceFileError as exc:
            return Verdict(score=0.0, details={"error": str(exc)})
        return await bounded(self._verdict_on, document, schema)

    def _verdict_on(self, document: Any, schema: dict[str, Any] | None) -> Verdict:
        checks: dict[str, bool] = {}
        errors: list[str] = []
        problems: dict[str, str] = {}
        if schema is not None:
            errors = schema_errors(schema, document)
            checks["schema"] = not errors
        failed = ["schema"] if errors else []
        for assertion in self.assertions:
            found = assertion.mismatch(document)
            checks[assertion.name] = found is None
            failed += [] if found is None else [f"{assertion.name}, {found}" if found else assertion.name]
            problem = assertion.judged(document).problem if found == "" else None
            if problem is not None:
                problems[assertion.name] = problem
        details: dict[str, Any] = {"failed": failed, "schema_errors": errors[:10]}
        if problems:
            details["problems"] = problems
        if failed:
            with contextlib.suppress(ValueError):  # an integer past the int-string limit: no excerpt
                details |= seen_of(self.path, json.dumps(document, ensure_ascii=False))
        return Verdict(score=fraction(checks), details=details)


def schema_errors(schema: dict[str, Any], document: Any) -> list[str]:
    """What ``document`` breaks of ``schema``, sorted; a number the validator cannot take (an integer
    past a double's range against ``multipleOf: 0.5``) is an error of the document, not the grader's.

    Example: ``schema_errors({"maximum": 3}, 5)`` -> ``["5 is greater than the maximum of 3"]``.
    """
    try:
        return sorted(e.message for e in _validator(schema).iter_errors(document))
    except OverflowError as exc:
        return [f"a number in the document is past the range of a JSON number ({exc})"]
