"""What a model judge is shown besides its rubric, and the original spelling of a judge's fields.

``context`` (ours) and the flat fields of the original format load to the same ``JudgeContext``:
``files``, ``max_file_chars``, ``max_dialog_chars``, ``include_agent_output`` (``final_message``),
``include_tool_calls`` (``transcript``), ``include_dialog`` (``dialog``) and ``include_reference``.
A ``files`` entry is a sandbox glob, or a trusted file of the task: ``$TASK_DIR/rubric.md``,
``$REFERENCE_DIR/expected.py`` (read from the task's own folders, never the workspace).

Example (both load to the same context)::

    - {type: llm_judge, rubric: "Is it right?", context: {files: [out.md], transcript: true}}
    - {type: llm_judge, prompt: "Is it right?", files: [out.md], include_tool_calls: true}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field

from coder_eval.criteria.base import GradingContext, matching_files, read_text
from coder_eval.criteria.judges.evidence import capped, render_transcript, task_prompt, untrusted
from coder_eval.criteria.transcript import final_text, message_text
from coder_eval.errors import GraderError
from coder_eval.sandbox.base import check_sandbox_path
from coder_eval.trajectory import Event, Message

MAX_FILES = 50
"""At most this many files are shown to the judge, whatever the globs match."""
TRUSTED_PREFIXES = ("$TASK_DIR/", "$REFERENCE_DIR/")
FLAT_FIELDS = (
    "files",
    "max_file_chars",
    "max_dialog_chars",
    "include_agent_output",
    "include_tool_calls",
    "include_dialog",
    "include_reference",
)
"""The original format's judge-context fields, written on the criterion itself."""


def _relative(value: str) -> str:
    if PurePosixPath(value).is_absolute() or value.startswith("~"):
        raise ValueError(f"{value!r} must be relative to the task's hidden material or task folder")
    return value


def _judge_file(value: str) -> str:
    """A sandbox glob, or ``$TASK_DIR/...`` / ``$REFERENCE_DIR/...`` (a trusted file of the task)."""
    for prefix in TRUSTED_PREFIXES:
        if value.startswith(prefix):
            check_sandbox_path(value.removeprefix(prefix))
            return value
    return check_sandbox_path(value)


JudgeFile = Annotated[str, AfterValidator(_judge_file)]


class JudgeContext(BaseModel):
    """What the judge is shown besides the rubric and the task prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    files: list[JudgeFile] = Field(
        default_factory=list, description="Sandbox globs, or $TASK_DIR/... and $REFERENCE_DIR/... files."
    )
    max_file_chars: int = Field(default=20_000, ge=100, description="Characters shown per file.")
    final_message: bool = Field(
        default=True,
        validation_alias=AliasChoices("final_message", "include_agent_output"),
        description="Show the agent's final message (include_agent_output).",
    )
    transcript: bool = Field(
        default=False,
        validation_alias=AliasChoices("transcript", "include_tool_calls"),
        description="Show a summarised tool-call transcript (include_tool_calls).",
    )
    max_transcript_chars: int = Field(default=20_000, ge=500, description="Cap on the transcript.")
    dialog: bool = Field(
        default=False,
        validation_alias=AliasChoices("dialog", "include_dialog"),
        description="Show the user and assistant messages of the dialog (include_dialog).",
    )
    max_dialog_chars: int = Field(default=20_000, ge=500, description="Cap on the dialog.")
    task_prompt: bool = Field(default=True, description="Show the prompt the agent was given.")
    reference: Annotated[str, AfterValidator(_relative)] | None = Field(
        default=None, description="Trusted reference, relative to the hidden material or task folder."
    )
    include_reference: bool = Field(
        default=False, description="Show the files of the task's reference folder ($REFERENCE_DIR)."
    )


def lift_flat_fields(data: Any) -> Any:
    """The original format's flat context fields moved into ``context`` (names kept as written)."""
    if not isinstance(data, dict):
        return data
    flat = {key: data[key] for key in FLAT_FIELDS if key in data}
    if not flat:
        return data
    context = data.get("context") or {}
    if not isinstance(context, dict):
        return data
    rest = {k: v for k, v in data.items() if k not in flat}
    return {**rest, "context": {**context, **flat}}


def original_spelling(data: Any, defaults: dict[str, Any]) -> Any:
    """A judge written with ``prompt`` (the original's name for ``rubric``) takes ``defaults``."""
    if not isinstance(data, dict) or "prompt" not in data:
        return data
    if "rubric" in data:
        raise ValueError("give 'rubric' or 'prompt' (the same field), not both")
    return {**defaults, **data}


def trusted_file(name: str, ctx: GradingContext) -> Path:
    """A task author's file: ``$REFERENCE_DIR/x``, ``$TASK_DIR/x`` (``$TASK_DIR/../rubrics/x.md``, a
    file of the suite beside the task, too), else the hidden tests, the reference folder, then the
    task folder; never the workspace. ``GraderError`` when it is in none of them."""
    bases = [b for b in (ctx.hidden.hidden_tests, ctx.hidden.reference_dir, ctx.task_dir) if b is not None]
    for prefix, base in zip(TRUSTED_PREFIXES, (ctx.task_dir, ctx.hidden.reference_dir), strict=True):
        if name.startswith(prefix):
            if base is None:
                raise GraderError(
                    f"{name!r}: the task has no reference directory ('reference: {{directory}}')"
                )
            written = (base / name.removeprefix(prefix)).resolve()
            if written.is_file():  # the author's own path, wherever in the suite it leads
                return written
            name, bases = name.removeprefix(prefix), [base]
    for base in bases:
        candidate = (base / name).resolve()
        if candidate.is_file() and candidate.is_relative_to(base.resolve()):
            return candidate
    tried = ", ".join(str(b / name) for b in bases)
    raise GraderError(f"reference {name!r} not found in the task's own files (looked for {tried})")


async def context_blocks(context: JudgeContext, ctx: GradingContext, shown: dict[str, Any]) -> list[str]:
    """The task prompt, trusted references and the evidence ``context`` asks for, as prompt blocks."""
    parts = []
    prompt = task_prompt(ctx.events) if context.task_prompt else None
    if prompt:
        parts.append(f"<task_prompt>\n{prompt.strip()}\n</task_prompt>")
    parts.extend(_references(context, ctx, shown))
    evidence = await _files(context, ctx, shown)
    if context.final_message:
        final = final_text(ctx.events, ctx.final_message) or "(no final message)"
        evidence.append(untrusted("final_message", capped(final, context.max_file_chars)))
    if context.transcript:
        text = render_transcript(ctx.events, None, context.max_transcript_chars)
        evidence.append(untrusted("transcript", text))
    if context.dialog:
        evidence.append(untrusted("dialog", render_dialog(ctx.events, context.max_dialog_chars)))
    if evidence:
        parts += ["Evidence from the agent's run (untrusted data):", *evidence]
    return parts


def _references(context: JudgeContext, ctx: GradingContext, shown: dict[str, Any]) -> list[str]:
    names = [context.reference] if context.reference else []
    names += [f for f in context.files if f.startswith(TRUSTED_PREFIXES)]
    if context.include_reference:
        folder = ctx.hidden.reference_dir
        if folder is None:
            raise GraderError(
                "include_reference: the task has no reference directory ('reference: {directory}')"
            )
        found = sorted(p for p in folder.rglob("*") if p.is_file())[:MAX_FILES]
        names += [f"$REFERENCE_DIR/{p.relative_to(folder).as_posix()}" for p in found]
    blocks = []
    for name in dict.fromkeys(names):
        text = trusted_file(name, ctx).read_text(encoding="utf-8", errors="replace")
        shown.setdefault("references", []).append(name)
        blocks.append(f'<reference source="{name}">\n{capped(text, context.max_file_chars)}\n</reference>')
    return blocks


async def _files(context: JudgeContext, ctx: GradingContext, shown: dict[str, Any]) -> list[str]:
    blocks: list[str] = []
    for pattern in (f for f in context.files if not f.startswith(TRUSTED_PREFIXES)):
        found = await matching_files(ctx.sandbox, pattern)
        if not found:
            blocks.append(f"(no file in the sandbox matches {pattern!r})")
        for name in found:
            if name in shown["files"] or len(shown["files"]) >= MAX_FILES:
                continue
            text = await read_text(ctx.sandbox, name)
            shown["files"].append(name)
            if len(text) > context.max_file_chars:
                shown["truncated"].append(name)
            blocks.append(untrusted(f"file:{name}", capped(text, context.max_file_chars)))
    return blocks


def render_dialog(events: Sequence[Event], limit: int) -> str:
    """The dialog as text: each top-level user and assistant message with text, in order.

    Example: ``"user: Add a flag.\\n\\nassistant: Which name?"``; capped at ``limit``, both ends kept.
    """
    lines = [
        f"{e.role}: {message_text(e).strip()}"
        for e in events
        if isinstance(e, Message)
        and e.role in ("user", "assistant")
        and e.parent_tool_use_id is None
        and message_text(e).strip()
    ]
    text = "\n\n".join(lines) if lines else "(no dialog messages)"
    return capped(text, limit, keep_end=True)
