"""The script a scripted model server replays: assistant turns, conditions, choices and errors.

Example (YAML)::

    model: claude-sonnet-4-5
    final_text: "Done."
    turns:
      - blocks:
          - text: "Let me look."
          - tool_use: {name: Bash, input: {command: "ls"}}
      - when: {skill_offered: sitectl}
        blocks: [{tool_use: {name: Skill, input: {skill: sitectl}}}]
        otherwise: [{text: "No skill here."}]
      - choose:
          - {weight: 0.7, blocks: [{text: "Plan A."}]}
          - {weight: 0.3, blocks: [{text: "Plan B."}]}
      - error: {kind: overloaded, times: 1}
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from coder_eval.errors import TaskError
from coder_eval.yaml_source import YamlDoc, explain, read_yaml

ErrorKind = Literal["auth", "rate_limit", "server", "overloaded", "cut_stream", "hang"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolUse(_Model):
    """A tool call the assistant makes. Example: ``{name: Bash, input: {command: "ls"}}``."""

    name: str = Field(min_length=1, description="Tool name as offered in the request (Bash, Skill, ...).")
    input: dict[str, Any] | str = Field(
        default_factory=dict,
        description="The tool's input object; a string for a freeform tool (Codex's apply_patch), sent "
        "as it is to a CLI that offers that tool.",
    )


class Block(_Model):
    """One content block: exactly one of ``text`` or ``tool_use``. Example: ``{text: "Hi."}``."""

    text: str | None = Field(default=None, description="A text block.")
    tool_use: ToolUse | None = Field(default=None, description="A tool_use block.")

    @model_validator(mode="after")
    def _exactly_one(self) -> Block:
        if (self.text is None) == (self.tool_use is None):
            raise ValueError("a block needs exactly one of 'text' or 'tool_use'")
        return self


class When(_Model):
    """A condition on the request; every field given must hold.

    Example: ``{tool_offered: Skill, request_contains: "site-tools:sitectl"}``
    """

    tool_offered: str | list[str] | None = Field(
        default=None, description="Tool name(s) that must all be in the request's `tools`."
    )
    skill_offered: str | None = Field(
        default=None,
        description="A skill the request lists, as `name` or `plugin:name`, that the CLI can load.",
    )
    skill_loaded: str | None = Field(
        default=None,
        description="A skill loaded earlier in the conversation (a skill-tool call, a read of its SKILL.md).",
    )
    request_contains: str | None = Field(
        default=None, description="Substring of the request text (system, messages, tool results)."
    )
    request_matches: str | None = Field(default=None, description="Regex searched in the request text.")
    last_tool_result_contains: str | None = Field(
        default=None, description="Substring of the tool results in the latest user message."
    )
    last_tool_result_matches: str | None = Field(
        default=None, description="Regex searched in the tool results of the latest user message."
    )

    @model_validator(mode="after")
    def _valid(self) -> When:
        if not self.model_fields_set:
            raise ValueError("a condition needs at least one field")
        for pattern in (self.request_matches, self.last_tool_result_matches):
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"invalid regex {pattern!r}: {exc}") from exc
        return self


class ErrorSpec(_Model):
    """An injected failure. Example: ``{kind: overloaded, times: 1}`` (the retry then succeeds)."""

    kind: ErrorKind = Field(
        description="auth (401), rate_limit (429), server (500), overloaded (529), "
        "cut_stream (connection closed mid-message) or hang (the response stalls)."
    )
    times: int | None = Field(
        default=None, ge=1, description="Fail only the first N attempts at this turn; None fails every one."
    )
    after_events: int = Field(
        default=3, ge=0, description="cut_stream/hang: SSE events sent before the cut or stall."
    )
    seconds: float | None = Field(
        default=None,
        gt=0,
        description="hang: stall this long, then close the connection; None stalls until the server stops.",
    )
    message: str | None = Field(default=None, description="Error message in the JSON body.")
    retry_after: float | None = Field(
        default=None, ge=0, description="Seconds sent as `retry-after` (HTTP kinds); None sends no header."
    )


class Choice(_Model):
    """One weighted alternative of ``choose``. Example: ``{weight: 0.3, blocks: [{text: "B"}]}``."""

    weight: float = Field(default=1.0, gt=0, description="Relative weight of this alternative.")
    blocks: list[Block] = Field(min_length=1, description="The assistant content of this alternative.")


class Turn(_Model):
    """One assistant turn: ``blocks``, a seeded ``choose`` or an ``error``, optionally under ``when``.

    Example: ``{when: {tool_offered: Skill}, blocks: [...], otherwise: [...]}``
    """

    when: When | None = Field(default=None, description="The turn applies only when this holds.")
    blocks: list[Block] | None = Field(default=None, description="The assistant content of this turn.")
    choose: list[Choice] | None = Field(
        default=None, min_length=1, description="Alternatives picked at random, seeded by (seed, turn index)."
    )
    error: ErrorSpec | None = Field(
        default=None,
        description="Fail this turn; with `times`, later attempts get `blocks`/`choose`, or the next turn.",
    )
    otherwise: list[Block] | None = Field(
        default=None, description="Content when `when` fails; without it a failing turn is skipped."
    )

    @model_validator(mode="after")
    def _shape(self) -> Turn:
        if self.blocks is not None and self.choose is not None:
            raise ValueError("a turn takes 'blocks' or 'choose', not both")
        if self.blocks is None and self.choose is None and self.error is None:
            raise ValueError("a turn needs 'blocks', 'choose' or 'error'")
        if self.otherwise is not None and self.when is None:
            raise ValueError("'otherwise' needs 'when'")
        return self


class Script(_Model):
    """A whole script. Example: ``Script(turns=[Turn(blocks=[Block(text="Hi.")])])``."""

    model: str | None = Field(
        default=None, description="Model name in responses; None echoes the request's `model`."
    )
    turns: list[Turn] = Field(default_factory=list, description="Turns of the main conversation, in order.")
    subagent_turns: list[Turn] = Field(
        default_factory=list,
        description="Turns of each sub-agent conversation (Claude Code Agent/Task tool).",
    )
    final_text: str = Field(default="Done.", description="Answer once the turns run out (end_turn).")
    auxiliary_text: str = Field(default="OK", description="Answer to auxiliary requests (no tools offered).")
    answer_without_tools: bool = Field(
        default=False,
        description="Answer requests that offer no tools from `turns` too (e.g. a plain chat client).",
    )


def load_script(spec: Script | dict[str, Any] | str | Path, base_dir: Path | None = None) -> Script:
    """A validated :class:`Script` from a dict, or a YAML file path relative to ``base_dir``.

    Example: ``load_script("scripts/skill.yaml", base_dir=Path("tasks"))``; raises TaskError
    naming the file, line and field, e.g. ``tasks/scripts/skill.yaml:4: turns[0].blok: ...``.
    """
    if isinstance(spec, Script):
        return spec
    if isinstance(spec, dict):
        return _validate(YamlDoc(Path("<inline script>"), spec))
    path = Path(spec) if base_dir is None else base_dir / spec
    doc = read_yaml(path, kind=TaskError, what="script")
    return _validate(doc)


def _validate(doc: YamlDoc) -> Script:
    try:
        return Script.model_validate(doc.data)
    except ValidationError as exc:
        raise TaskError(explain(exc, doc, Script)) from exc


def check_inline_script(value: dict[str, Any] | str | None) -> dict[str, Any] | str | None:
    """Validate an inline script where it is declared, so a bad one fails at load time.

    A file reference (a string) is checked where it is resolved, relative to its declaring file.
    """
    if isinstance(value, dict):
        try:
            load_script(value)
        except TaskError as exc:
            raise ValueError(f"scripted: {exc}") from exc
    return value


ScriptRef = Annotated[dict[str, Any] | str | None, AfterValidator(check_inline_script)]
"""A ``scripted`` field: an inline script (validated on load) or a script file's path."""
