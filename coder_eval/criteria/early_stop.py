"""How a criterion arms early stop: a ``stop_early`` block, or the older ``stop_when`` spelling.

Example (task YAML)::

    success_criteria:
      - type: skill_triggered
        skill_name: pdf
        stop_early: {on_pass: stop, on_fail: stop, decide_within: 20}

      - type: command_executed              # the older spelling of the same arming
        command_pattern: "git push --force"
        max_count: 0
        stop_when: fail                     # pass | fail | decided (auto: what it can decide)

A criterion armed this way is evaluated on the trajectory so far at each tool-call boundary
(``coder_eval.episode.iterations``); its *live decision* says whether the partial trajectory already settles
it: ``command_executed`` passes for good once ``min_count`` matching commands ran with no
``max_count``, and fails for good once more than ``max_count`` ran; ``skill_triggered`` is settled by
the first skill engaged (its label never changes after), and an episode that should engage no skill
is undecided until it ends. ``on_pass`` / ``on_fail`` say which settled outcomes may end the episode.

``stop_when`` is read as ``pass`` -> ``{on_pass: stop, on_fail: continue}``, ``fail`` ->
``{on_pass: continue, on_fail: stop}``, ``decided`` and ``auto`` -> both ``stop``. As in the original
format it is armed only when the task sets ``run_limits.stop_early: true`` (the loader drops it
otherwise), and arming a polarity the criterion can never decide (``stop_when: pass`` with a
``max_count``) is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

Decision = Literal["pass", "fail"]
"""A live decision: the partial trajectory settles the criterion this way."""


class StopEarly(BaseModel):
    """Arms early stop on a criterion: the agent is stopped at a tool-call boundary once it is decided.

    Example: ``stop_early: {on_pass: stop, decide_within: 20}``. ``true`` or ``{}`` is the defaults,
    the original format's: stop on a settled fail only (a distractor row's guard).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    on_pass: Literal["stop", "continue"] = Field(
        default="continue", description="stop: a settled pass may end the episode; continue: it may not."
    )
    on_fail: Literal["stop", "continue"] = Field(
        default="stop", description="stop: a settled fail may end the episode; continue: it may not."
    )
    decide_within: int | None = Field(
        default=None, ge=1, description="Tool calls within which the criterion must be decided."
    )

    def stops_on(self, decision: Decision | None) -> bool:
        """Whether ``decision`` lets this criterion end the episode."""
        return (decision == "pass" and self.on_pass == "stop") or (
            decision == "fail" and self.on_fail == "stop"
        )


def _stop_early(value: Any) -> Any:
    if value is True:
        return {}
    return None if value is False else value


StopEarlyField = Annotated[StopEarly | None, BeforeValidator(_stop_early)]

STOP_WHEN: dict[str, dict[str, str]] = {
    "pass": {"on_pass": "stop", "on_fail": "continue"},
    "fail": {"on_pass": "continue", "on_fail": "stop"},
    "decided": {"on_pass": "stop", "on_fail": "stop"},
    "auto": {"on_pass": "stop", "on_fail": "stop"},
}
"""The original format's ``stop_when`` values as ``stop_early`` blocks."""


def armed_spelling(
    data: dict[str, Any], kind: str, arming: Callable[[], list[str]] | None, decidable: frozenset[str]
) -> dict[str, Any]:
    """A criterion's fields with ``stop_when`` read as its ``stop_early`` block.

    ``arming``: None when the kind has early stop, else what lists the kinds that have it (for the
    message); ``decidable``: the live decisions this criterion can reach. ``ValueError`` for arming
    what cannot be armed, or a polarity it can never decide.
    """
    for name in ("stop_early", "stop_when"):
        if name in data and arming is not None:
            *others, last = arming()
            kinds = f"{', '.join(others)} and {last}" if others else last
            raise ValueError(f"{name}: early stop is armed only on {kinds} criteria, not on {kind}")
    if "stop_when" not in data:
        return data
    when = data["stop_when"]
    if "stop_early" in data:
        raise ValueError("give stop_when or stop_early, not both (stop_when is the older spelling)")
    if when not in STOP_WHEN:
        raise ValueError(f"stop_when: {when!r} is not one of {', '.join(STOP_WHEN)}")
    block = STOP_WHEN[when]
    wanted = {d for d in ("pass", "fail") if block[f"on_{d}"] == "stop"}
    if when == "auto":
        block = {f"on_{d}": "stop" if d in decidable else "continue" for d in ("pass", "fail")}
    if not wanted & decidable:
        reachable = " or ".join(sorted(decidable)) + " while the agent runs" if decidable else "at the end"
        raise ValueError(
            f"stop_when: {when}: this {kind} can only be decided {reachable} (a command_executed "
            "passes early only without max_count, fails early only with one)"
        )
    rest = {k: v for k, v in data.items() if k != "stop_when"}
    return {**rest, "stop_early": block}
