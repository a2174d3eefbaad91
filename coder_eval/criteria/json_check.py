"""``json_check``: a JSON file checked against a JSON Schema and JMESPath assertions.

Example::

    - type: json_check
      path: out/summary.json
      schema: {type: object, required: [total]}
      assertions:
        - {expression: total, equals: 3}
        - {expression: "items[?done] | length(@)", at_least: 2}
"""

from __future__ import annotations

import re
from typing import Any, Literal

import jmespath
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from coder_eval.criteria.base import (
    CriterionSpec,
    GradingContext,
    JmesPath,
    Regex,
    Verdict,
    fraction,
    parse_json,
    read_text,
)
from coder_eval.sandbox.base import SandboxPath, WorkspaceFileError

CHECKS = ("equals", "contains", "matches", "at_least", "at_most", "exists")


class Assertion(BaseModel):
    """One JMESPath expression and what its value must be (give exactly one check)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    expression: JmesPath = Field(description="JMESPath expression.")
    equals: Any = Field(default=None, description="Value must equal this (null allowed).")
    contains: Any = Field(default=None, description="Value (list or string) must contain this.")
    matches: Regex | None = Field(default=None, description="str(value) must match this regex.")
    at_least: float | None = Field(default=None, description="Value must be >= this.")
    at_most: float | None = Field(default=None, description="Value must be <= this.")
    exists: bool | None = Field(default=None, description="Value must (not) be null.")

    @model_validator(mode="after")
    def _one_check(self) -> Assertion:
        given = [name for name in CHECKS if name in self.model_fields_set]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of equals, contains, matches, at_least, at_most, exists; got {given}"
            )
        return self

    def holds(self, document: Any) -> bool:
        value = jmespath.search(self.expression, document)
        if "equals" in self.model_fields_set:
            return bool(value == self.equals)
        if "contains" in self.model_fields_set:
            return isinstance(value, list | str) and self.contains in value
        if self.matches is not None:
            return value is not None and re.search(self.matches, str(value)) is not None
        if self.exists is not None:
            return (value is not None) == self.exists
        if not isinstance(value, int | float) or isinstance(value, bool):
            return False
        return value >= self.at_least if self.at_least is not None else value <= (self.at_most or 0)


def _validator(schema: dict[str, Any]) -> Any:
    import jsonschema

    return jsonschema.validators.validator_for(schema)(schema)


class JsonCheck(CriterionSpec):
    type: Literal["json_check"] = "json_check"
    path: SandboxPath = Field(description="JSON file relative to the sandbox root.")
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema", description="JSON Schema.")
    assertions: list[Assertion] = Field(default_factory=list, description="JMESPath assertions.")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            import jsonschema  # imported on use: it is slow to import, and most tasks need none

            try:
                jsonschema.validators.validator_for(value).check_schema(value)
            except jsonschema.SchemaError as exc:
                raise ValueError(f"invalid JSON Schema: {exc.message}") from exc
        return value

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        try:
            document = parse_json(await read_text(ctx.sandbox, self.path), self.path)
        except WorkspaceFileError as exc:
            return Verdict(score=0.0, details={"error": str(exc)})
        checks: dict[str, bool] = {}
        if self.json_schema is not None:
            errors = sorted(e.message for e in _validator(self.json_schema).iter_errors(document))
            checks["schema"] = not errors
        else:
            errors = []
        for assertion in self.assertions:
            checks[assertion.expression] = assertion.holds(document)
        failed = [name for name, ok in checks.items() if not ok]
        return Verdict(score=fraction(checks), details={"failed": failed, "schema_errors": errors[:10]})
