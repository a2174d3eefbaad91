"""``llm_judge``: a model grades the episode against a rubric, by a panel of votes.

The judge sees the rubric, the task prompt, an optional trusted reference (from the task's hidden
material or task folder, never the sandbox), and the evidence asked for in ``context``: sandbox files,
the final message, a summarised transcript, each wrapped as untrusted data. It answers only by the
forced ``submit_verdict`` tool call (score in [0, 1], passed, rationale). See ``judging`` for votes,
retries and costs.

Example::

    - type: llm_judge
      description: the README explains how to run the tool
      rubric: |
        Does README.md tell a new user how to install and run the tool, with a working example?
      context:
        files: ["README.md", "src/**/*.py"]
        max_file_chars: 20000
        final_message: true
        transcript: false
        reference: reference_readme.md     # hidden material or task folder
      model: claude-sonnet-4-6             # or scripted, with a `scripted:` block
      votes: 3
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool

from coder_eval.criteria.base import GradingContext, Verdict, matching_files, read_text
from coder_eval.criteria.evidence import UNTRUSTED_RULES, capped, render_transcript, task_prompt, untrusted
from coder_eval.criteria.judging import Ballot, JudgeSpec, Reading, panel_verdict, run_panel
from coder_eval.criteria.transcript import final_text
from coder_eval.errors import GraderError
from coder_eval.sandbox.base import SandboxPath

MAX_FILES = 50
"""At most this many files are shown to the judge, whatever the globs match."""

SYSTEM = f"""\
You are a careful, strict grader of the work of an AI coding agent. You are given a rubric, the task \
the agent was asked to do, possibly a trusted reference, and evidence from the agent's run. Apply the \
rubric to the evidence only, and answer by calling the submit_verdict tool: a score in [0, 1], \
whether the work passes the rubric, and a short rationale citing the evidence.

{UNTRUSTED_RULES}"""

VERDICT_TOOL: dict[str, Any] = {
    "name": "submit_verdict",
    "description": "Submit the verdict on the agent's work against the rubric.",
    "input_schema": {
        "type": "object",
        "properties": {
            "score": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "0 = fails, 1 = fully meets",
            },
            "passed": {"type": "boolean", "description": "Whether the work passes the rubric."},
            "rationale": {"type": "string", "description": "Why, citing the evidence, in a few sentences."},
        },
        "required": ["score", "passed", "rationale"],
        "additionalProperties": False,
    },
}


def _relative(value: str) -> str:
    if PurePosixPath(value).is_absolute() or value.startswith("~"):
        raise ValueError(f"{value!r} must be relative to the task's hidden material or task folder")
    return value


class VerdictInput(BaseModel):
    """The ``submit_verdict`` tool input, validated strictly."""

    model_config = ConfigDict(extra="forbid", strict=True)
    score: float = Field(ge=0, le=1)
    passed: StrictBool
    rationale: str


class JudgeContext(BaseModel):
    """What the judge is shown besides the rubric and the task prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    files: list[SandboxPath] = Field(default_factory=list, description="Sandbox globs to show.")
    max_file_chars: int = Field(default=20_000, ge=100, description="Characters shown per file.")
    final_message: bool = Field(default=True, description="Show the agent's final message.")
    transcript: bool = Field(default=False, description="Show a summarised tool-call transcript.")
    max_transcript_chars: int = Field(default=20_000, ge=500, description="Cap on the transcript.")
    task_prompt: bool = Field(default=True, description="Show the prompt the agent was given.")
    reference: Annotated[str, AfterValidator(_relative)] | None = Field(
        default=None, description="Trusted reference, relative to the hidden material or task folder."
    )


class LlmJudge(JudgeSpec):
    needs = frozenset({"trajectory", "workspace"})
    type: Literal["llm_judge"] = "llm_judge"
    rubric: str = Field(min_length=1, description="The question or criteria the judge applies.")
    context: JudgeContext = Field(default_factory=JudgeContext, description="What the judge is shown.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        shown: dict[str, Any] = {"files": [], "truncated": []}
        prompt = await self._prompt(ctx, shown)
        ballot = Ballot(SYSTEM, prompt, VERDICT_TOOL, read_verdict)
        votes = await run_panel(self, ballot, ctx)
        return panel_verdict(self, votes, **shown, prompt_chars=len(prompt))

    async def _prompt(self, ctx: GradingContext, shown: dict[str, Any]) -> str:
        parts = [f"<rubric>\n{self.rubric.strip()}\n</rubric>"]
        prompt = task_prompt(ctx.events) if self.context.task_prompt else None
        if prompt:
            parts.append(f"<task_prompt>\n{prompt.strip()}\n</task_prompt>")
        if self.context.reference:
            path = reference_path(self.context.reference, ctx)
            shown["reference"] = self.context.reference
            reference = capped(
                path.read_text(encoding="utf-8", errors="replace"), self.context.max_file_chars
            )
            parts.append(f'<reference source="{self.context.reference}">\n{reference}\n</reference>')
        parts.append("Evidence from the agent's run (untrusted data):")
        parts.extend(await self._files(ctx, shown))
        if self.context.final_message:
            final = final_text(ctx.events, ctx.final_message) or "(no final message)"
            parts.append(untrusted("final_message", capped(final, self.context.max_file_chars)))
        if self.context.transcript:
            text = render_transcript(ctx.events, None, self.context.max_transcript_chars)
            parts.append(untrusted("transcript", text))
        parts.append("Apply the rubric to the evidence and call submit_verdict.")
        return "\n\n".join(parts)

    async def _files(self, ctx: GradingContext, shown: dict[str, Any]) -> list[str]:
        blocks: list[str] = []
        for pattern in self.context.files:
            found = await matching_files(ctx.sandbox, pattern)
            if not found:
                blocks.append(f"(no file in the sandbox matches {pattern!r})")
            for name in found:
                if name in shown["files"] or len(shown["files"]) >= MAX_FILES:
                    continue
                text = await read_text(ctx.sandbox, name)
                shown["files"].append(name)
                if len(text) > self.context.max_file_chars:
                    shown["truncated"].append(name)
                blocks.append(untrusted(f"file:{name}", capped(text, self.context.max_file_chars)))
        return blocks


def read_verdict(tool_input: dict[str, Any]) -> Reading:
    """A ``submit_verdict`` input as a reading; ``ValueError`` (pydantic's) when it is invalid."""
    answer = VerdictInput.model_validate(tool_input)
    return Reading(answer.score, answer.passed, answer.rationale, {})


def reference_path(relative: str, ctx: GradingContext) -> Path:
    """A trusted file: the hidden tests, then the reference folder, then the task folder; never the
    workspace."""
    bases = [b for b in (ctx.hidden.hidden_tests, ctx.hidden.reference_dir, ctx.task_dir) if b is not None]
    for base in bases:
        candidate = (base / relative).resolve()
        if candidate.is_file() and candidate.is_relative_to(base.resolve()):
            return candidate
    tried = ", ".join(str(b / relative) for b in bases)
    raise GraderError(f"reference {relative!r} not found in the task's own files (looked for {tried})")
