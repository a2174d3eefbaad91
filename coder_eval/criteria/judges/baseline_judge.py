"""``baseline_judge``: a model compares the episode with a reference run; passes when it is at least
as good.

The reference is a transcript file (a JSONL trajectory or plain text) relative to the task, or an
episode of an earlier run (``run`` relative to the task folder unless absolute). Both transcripts
are shown as untrusted data, in an order drawn from the episode seed (so position bias averages out
over episodes) and recorded in ``details["order"]``. The judge answers with the forced
``submit_comparison`` tool (``better``: first, second or tie); each vote is mapped back to the
candidate: better 1.0 (passes), tie 0.5 (passes), worse 0.0 (fails). See ``panel`` for votes,
retries and costs.

Example::

    - type: baseline_judge
      description: at least as good as last release's run
      reference: {run: ../../runs/2026-11-01-release, episode_id: fix-bug--default--r0}
      # or: reference: {file: baselines/fix_bug.jsonl}
      rubric: Which run fixes the bug more convincingly, with less collateral change?
      model: claude-sonnet-4-6
      votes: 3
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from coder_eval.criteria.base import GradingContext, Verdict
from coder_eval.criteria.judges.evidence import (
    UNTRUSTED_RULES,
    capped,
    render_transcript,
    task_prompt,
    untrusted,
)
from coder_eval.criteria.judges.panel import Ballot, JudgeSpec, Reading, panel_verdict, run_panel
from coder_eval.errors import GraderError
from coder_eval.run_dir import RunDir
from coder_eval.trajectory import read_trajectory

Side = Literal["candidate", "reference"]
DEFAULT_RUBRIC = (
    "Which run accomplishes the task better? Judge correctness first, then completeness, then "
    "whether the agent checked its work, then economy of actions."
)
SCORES = {"candidate": 1.0, "tie": 0.5, "reference": 0.0}

SYSTEM = f"""\
You compare two runs of AI coding agents on the same task, shown as transcripts labelled first and \
second. Decide which run better satisfies the rubric, or call a tie when neither is better. The order \
is arbitrary: do not prefer a run for its position or its length. Answer by calling the \
submit_comparison tool with a short rationale citing the transcripts.

{UNTRUSTED_RULES}"""

COMPARISON_TOOL: dict[str, Any] = {
    "name": "submit_comparison",
    "description": "Submit which run is better under the rubric.",
    "input_schema": {
        "type": "object",
        "properties": {
            "better": {
                "type": "string",
                "enum": ["first", "second", "tie"],
                "description": "The better run.",
            },
            "rationale": {"type": "string", "description": "Why, citing both transcripts."},
        },
        "required": ["better", "rationale"],
        "additionalProperties": False,
    },
}


class ComparisonInput(BaseModel):
    """The ``submit_comparison`` tool input, validated strictly."""

    model_config = ConfigDict(extra="forbid", strict=True)
    better: Literal["first", "second", "tie"]
    rationale: str


class BaselineReference(BaseModel):
    """The run to compare with: ``file`` (relative to the task), or ``run`` plus ``episode_id``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    file: str | None = Field(default=None, description="JSONL trajectory or text, relative to the task.")
    run: str | None = Field(default=None, description="Run directory (relative to the task folder).")
    episode_id: str | None = Field(default=None, description="Episode of that run.")

    @model_validator(mode="after")
    def _one_source(self) -> BaselineReference:
        if (self.file is None) == (self.run is None) or (self.run is None) != (self.episode_id is None):
            raise ValueError("give either 'file', or 'run' together with 'episode_id'")
        return self

    def path(self, task_dir: Path) -> Path:
        """The reference file on disk; ``GraderError`` when it is missing."""
        if self.file is not None:
            path = task_dir / self.file
        else:
            path = RunDir(task_dir / (self.run or "")).episode_path(self.episode_id or "")
        if not path.is_file():
            raise GraderError(f"baseline_judge reference {path} not found")
        return path


class BaselineJudge(JudgeSpec):
    needs = frozenset({"trajectory"})
    type: Literal["baseline_judge"] = "baseline_judge"
    reference: BaselineReference = Field(description="The reference run.")
    rubric: str = Field(default=DEFAULT_RUBRIC, min_length=1, description="What 'better' means.")
    max_transcript_chars: int = Field(default=30_000, ge=500, description="Cap on each transcript.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        order = presentation_order(ctx.seed)
        transcripts: dict[Side, str] = {
            "candidate": render_transcript(ctx.events, ctx.final_message, self.max_transcript_chars),
            "reference": self._reference_text(ctx.task_dir),
        }
        ballot = Ballot(
            SYSTEM, self._prompt(ctx, order, transcripts), COMPARISON_TOOL, comparison_reader(order)
        )
        votes = await run_panel(self, ballot, ctx)
        return panel_verdict(self, votes, order=list(order), reference=str(self.reference.path(ctx.task_dir)))

    def _reference_text(self, task_dir: Path) -> str:
        path = self.reference.path(task_dir)
        if path.suffix == ".jsonl":
            return render_transcript(read_trajectory(path).events, None, self.max_transcript_chars)
        text = path.read_text(encoding="utf-8", errors="replace")
        return capped(text, self.max_transcript_chars, keep_end=True)

    def _prompt(self, ctx: GradingContext, order: tuple[Side, Side], transcripts: dict[Side, str]) -> str:
        parts = [f"<rubric>\n{self.rubric.strip()}\n</rubric>"]
        prompt = task_prompt(ctx.events)
        if prompt:
            parts.append(f"<task_prompt>\n{prompt.strip()}\n</task_prompt>")
        parts.append(untrusted("transcript:first", transcripts[order[0]]))
        parts.append(untrusted("transcript:second", transcripts[order[1]]))
        parts.append("Compare the first and the second run under the rubric and call submit_comparison.")
        return "\n\n".join(parts)


def presentation_order(seed: int) -> tuple[Side, Side]:
    """Which run is shown first: a fair coin seeded by the episode seed.

    Example: ``presentation_order(1)`` -> ``("reference", "candidate")`` (always, for seed 1).
    """
    if random.Random(f"{seed}:baseline_judge").random() < 0.5:
        return ("candidate", "reference")
    return ("reference", "candidate")


def comparison_reader(order: tuple[Side, Side]) -> Callable[[dict[str, Any]], Reading]:
    """A reader that maps ``better`` (a position) back to the candidate's score and pass flag."""

    def read(tool_input: dict[str, Any]) -> Reading:
        answer = ComparisonInput.model_validate(tool_input)
        winner = {"first": order[0], "second": order[1], "tie": "tie"}[answer.better]
        extra = {"better": answer.better, "winner": winner}
        return Reading(SCORES[winner], winner != "reference", answer.rationale, extra)

    return read
