"""Simulated users: after each agent reply a simulator model writes the next user message.

Example (task YAML)::

    initial_prompt: Add a --verbose flag to the CLI.
    agent: {kind: claude-code, model: scripted}
    simulation:
      persona: A terse maintainer who answers questions but never volunteers details.
      goal: The flag exists, prints debug lines, and is documented in README.md.
      constraints: [Never write code yourself., Answer in at most two sentences.]
      stop_token: "<<<END>>>"         # the simulator ends the dialog by writing it (the default)
      max_turns: 8                    # user turns after the initial prompt (the default)
      model: claude-sonnet-4-6        # or scripted, with a `scripted:` block (offline)
      check_criteria: end_of_dialog   # or every_turn (alias both): criteria checked after each reply too
      stop_when_criteria_pass: false  # true: end once every gating criterion passes (checked each turn)
      max_total_tokens: 50000         # the simulator's own tokens; the dialog ends when they run out
      n_trials: 3                     # dialogs per task and repeat (episodes, like repeats)

The agent keeps its session across turns. Each simulator message is a ``message`` event with
``role: user``, ``simulated: true`` and the simulator's model and usage (never counted in the
episode's agent totals). ``system`` messages record per-turn criteria checks (``criteria_check``)
and why the dialog ended (``dialog_end``). See docs/simulation.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from coder_eval.scripted.script import ScriptRef

SCRIPTED = "scripted"
DEFAULT_MODEL = "claude-sonnet-4-6"
"""The simulator model when none is given; also the name a scripted simulator answers as."""


class SimulationSpec(BaseModel):
    """The ``simulation`` block of a task: who the simulated user is and when the dialog ends."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    persona: str = Field(default="", description="Who the simulated user is and how they write.")
    goal: str = Field(min_length=1, description="What the user wants; the simulator stops once it is met.")
    constraints: list[str] = Field(default_factory=list, description="Rules the simulated user follows.")
    enabled: bool = Field(default=True, description="false: the block is kept but no simulated user runs.")
    stop_token: str = Field(default="<<<END>>>", min_length=1, description="Written to end the dialog.")
    max_turns: int = Field(default=8, ge=1, description="User turns after the initial prompt.")
    model: str = Field(default=DEFAULT_MODEL, description="Simulator model id, or 'scripted'.")
    scripted: ScriptRef = Field(
        default=None, description="Script for model 'scripted': inline, or a file relative to the task."
    )
    max_tokens: int = Field(default=1024, ge=1, description="max_tokens of each simulator call.")
    check_criteria: Literal["end_of_dialog", "every_turn"] = Field(
        default="end_of_dialog",
        description="every_turn (the original's 'both' too): check the criteria after each agent reply too.",
    )
    stop_when_criteria_pass: bool = Field(
        default=False,
        validation_alias=AliasChoices("stop_when_criteria_pass", "stop_on_criteria_pass"),
        description="End the dialog once every gating criterion passes (checked after each reply).",
    )
    max_total_tokens: int | None = Field(
        default=None, ge=1, description="Tokens the simulator may use; the dialog ends when they run out."
    )
    n_trials: int = Field(default=1, ge=1, le=100, description="Dialogs per task and repeat (episodes).")
    parallel_trials: bool = Field(
        default=True, description="false: the trials of one task and variant run one after another."
    )

    @field_validator("check_criteria", mode="before")
    @classmethod
    def _both(cls, value: object) -> object:
        return "every_turn" if value == "both" else value  # end of dialog and every turn: every_turn

    @model_validator(mode="after")
    def _consistent(self) -> SimulationSpec:
        if self.model == SCRIPTED and self.scripted is None:
            raise ValueError("model is 'scripted' but there is no 'scripted' block; add one")
        if self.model != SCRIPTED and self.scripted is not None:
            raise ValueError(f"a 'scripted' block needs model: scripted (model is {self.model!r})")
        return self

    @property
    def checks_each_turn(self) -> bool:
        """Whether the criteria are checked after each agent reply (and not only at the end)."""
        return self.check_criteria == "every_turn" or self.stop_when_criteria_pass

    def model_keys(self) -> tuple[str, ...]:
        """Host variables the simulator's model authenticates with (either one); ``()`` for scripted."""
        return () if self.model == SCRIPTED else ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
