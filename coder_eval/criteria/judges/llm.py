"""``llm_judge``: a model grades the episode against a rubric, by a panel of votes.

The judge sees the rubric, the task prompt, trusted references (from the task's own folders, never
the sandbox), and the evidence asked for in ``context`` (``judge_context``): sandbox files, the final
message, a summarised transcript, the dialog, each wrapped as untrusted data. It answers only by the
forced ``submit_verdict`` tool call (score in [0, 1], passed, rationale). A vote passes when its
score reaches ``pass_threshold`` (0.7); the criterion passes when ``min_pass_votes`` votes pass.
See ``panel`` for votes, retries and costs.

Written in the original spelling (``prompt`` instead of ``rubric``, flat context fields), a judge
takes the original's default of one vote. ``enabled: false`` records it without
running it (weight 0, not gating); ``capture_transcript: true`` keeps the judge's prompt in the details.

Example::

    - type: llm_judge
      description: the README explains how to run the tool
      rubric: |
        Does README.md tell a new user how to install and run the tool, with a working example?
      context:
        files: ["README.md", "src/**/*.py", "$TASK_DIR/style_guide.md"]
        final_message: true
        transcript: false
        reference: reference_readme.md     # hidden material, reference folder or task folder
      model: claude-sonnet-4-6             # or scripted, with a `scripted:` block (offline)
      votes: 3
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StrictBool, model_validator

from coder_eval.criteria.base import JUDGE_PASS_THRESHOLD, GradingContext, Verdict, pass_threshold_field
from coder_eval.criteria.judges.context import (
    JudgeContext,
    context_blocks,
    lift_flat_fields,
    original_spelling,
)
from coder_eval.criteria.judges.evidence import UNTRUSTED_RULES, capped
from coder_eval.criteria.judges.panel import (
    Ballot,
    JudgeSpec,
    Reading,
    panel_verdict,
    run_panel,
    threshold_votes,
)

CAPTURED_PROMPT_CHARS = 50_000
"""Characters of the judge's prompt kept with ``capture_transcript``."""
ORIGINAL_DEFAULTS: dict[str, Any] = {"votes": 1}
"""A judge written in the original spelling asks once, as the original did. (Its temperature default
of 0 is not sent: the Messages API's own default applies unless ``temperature`` is written.)"""

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

SERVER = "judge"
"""The in-process MCP server that offers the verdict tool to an agent judge."""
VERDICT_TOOL_NAME = f"mcp__{SERVER}__{VERDICT_TOOL['name']}"
"""The verdict tool's name as the model sees it (what a scripted agent judge calls)."""


class VerdictInput(BaseModel):
    """The ``submit_verdict`` tool input, validated strictly."""

    model_config = ConfigDict(extra="forbid", strict=True)
    score: float = Field(ge=0, le=1)
    passed: StrictBool
    rationale: str


def rubric_field() -> Any:
    """The judges' ``rubric`` field (``prompt`` is the same field, the original format's name)."""
    return Field(
        min_length=1,
        validation_alias=AliasChoices("rubric", "prompt"),
        description="The question or criteria the judge applies (prompt is the same field).",
    )


class LlmJudge(JudgeSpec):
    needs = frozenset({"trajectory", "workspace"})
    type: Literal["llm_judge"] = "llm_judge"
    pass_threshold: float = pass_threshold_field(JUDGE_PASS_THRESHOLD)
    rubric: str = rubric_field()
    context: JudgeContext = Field(default_factory=JudgeContext, description="What the judge is shown.")
    capture_transcript: bool = Field(default=False, description="Keep the judge's prompt in the details.")
    enabled: bool = Field(default=True, description="false: recorded without running (weight 0, not gating).")

    @model_validator(mode="before")
    @classmethod
    def _original_spelling(cls, data: Any) -> Any:
        data = lift_flat_fields(original_spelling(data, ORIGINAL_DEFAULTS))
        if isinstance(data, dict) and data.get("enabled") is False:
            return {**data, "weight": 0, "gating": False}
        return data

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        if not self.enabled:
            return Verdict(score=0.0, passed=False, details={"skipped": "enabled: false"})
        shown: dict[str, Any] = {"files": [], "truncated": []}
        prompt = await self.prompt(ctx, shown)
        ballot = Ballot(SYSTEM, prompt, VERDICT_TOOL, read_verdict)
        votes = threshold_votes(await run_panel(self, ballot, ctx), self.pass_threshold)
        if self.capture_transcript:
            shown["judge_prompt"] = capped(prompt, CAPTURED_PROMPT_CHARS, keep_end=True)
        return panel_verdict(self, votes, **shown, prompt_chars=len(prompt))

    async def prompt(self, ctx: GradingContext, shown: dict[str, Any]) -> str:
        parts = [f"<rubric>\n{self.rubric.strip()}\n</rubric>"]
        parts.extend(await context_blocks(self.context, ctx, shown))
        parts.append("Apply the rubric to the evidence and call submit_verdict.")
        return "\n\n".join(parts)


def read_verdict(tool_input: dict[str, Any]) -> Reading:
    """A ``submit_verdict`` input as a reading; ``ValueError`` (pydantic's) when it is invalid."""
    answer = VerdictInput.model_validate(tool_input)
    return Reading(answer.score, answer.passed, answer.rationale, {})
