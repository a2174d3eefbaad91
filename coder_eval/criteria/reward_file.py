"""``reward_file``: run a verifier script in the finished workspace and score what it writes.

Example::

    - type: reward_file
      command: bash checks/verify.sh
      reward_file: logs/reward.txt     # one number
      reward_json: logs/reward.json    # or a flat object of numbers; wins when it is written

The reward files are removed before the command runs, so only what this run writes counts. They are
read as Harbor reads them: ``reward_json`` when the script wrote it, else ``reward_file``. The score
is the number in ``reward_file``, or from ``reward_json`` its ``reward_key`` value (default
``reward``) when it has one, else the mean of its values; it passes at ``pass_threshold`` (default 1).
Either path is relative to the workspace, or an absolute folder's file outside it that the task's
sandbox shows (``/logs/verifier/reward.txt`` in a ``scratch_dirs`` folder, ``bwrap`` and ``docker``).

A script that ends by itself without writing a reward it can be scored by (none at all, an empty
file, a file that holds no number) did not grade the agent: the criterion raises ``GraderError``
with the reason, so the episode is ``invalid`` (``grader_error``), as Harbor counts such a trial as a
verifier failure with no valid reward (``RewardFileNotFoundError`` ...), never as the agent's fail.
A script that ran out of time or was killed by a signal (an out-of-memory kill, a process of the
agent's code killing it) scores 0 with the reason: the agent's work stopped it before its reward.
Harbor task directories load with this criterion (``coder_eval.interop.task_readers.harbor``).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal, NamedTuple

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.errors import GraderError, WorkspaceFileError
from coder_eval.sandbox.base import ExecResult, MountPoint

OUTPUT_TAIL = 3000
"""Characters of the script's output kept in the details."""
SIGNALLED = 128
"""A shell's exit code past this is a process killed by signal (code - 128)."""


class Rewards(NamedTuple):
    """What one reward file held: its rewards, or why it cannot be scored (``absent``: not written)."""

    values: dict[str, float] | None
    problem: str | None = None
    absent: bool = False


class RewardFile(CriterionSpec):
    type: Literal["reward_file"] = "reward_file"
    needs = frozenset({"workspace", "commands"})
    command: str = Field(description="Shell command run from the workspace root (the verifier script).")
    reward_file: MountPoint = Field(default="reward.txt", description="File holding one number.")
    reward_json: MountPoint | None = Field(default=None, description="File holding a flat object of numbers.")
    reward_key: str = Field(default="reward", description="The reward_json value that is the score.")
    timeout: float = Field(default=600.0, gt=0, description="Seconds before the command is killed.")

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        files = [path for path in (self.reward_json, self.reward_file) if path is not None]
        await ctx.sandbox.exec(["rm", "-f", "--", *files], timeout=30)
        result = await ctx.sandbox.exec(self.command, timeout=self.timeout)
        details: dict[str, Any] = {
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "output": result.output[-OUTPUT_TAIL:],
        }
        chosen, rewards = self.reward_file, await _read_rewards(ctx, self.reward_file, as_json=False)
        if self.reward_json is not None:
            written = await _read_rewards(ctx, self.reward_json, as_json=True)
            if not written.absent:
                chosen, rewards = self.reward_json, written
        if rewards.values is not None:
            score = rewards.values.get(self.reward_key, sum(rewards.values.values()) / len(rewards.values))
            return Verdict(
                score=score, details={**details, "reward_source": chosen, "rewards": rewards.values}
            )
        return _no_reward(result, rewards.problem or _missing(files), details)


def _missing(files: list[str]) -> str:
    return f"the verifier script wrote no reward file ({' or '.join(reversed(files))})"


def _no_reward(result: ExecResult, problem: str, details: dict[str, Any]) -> Verdict:
    """The agent's fail when its work stopped the script (a timeout, a signal); else ``GraderError``."""
    if result.timed_out:
        return Verdict(score=0.0, passed=False, details={**details, "error": f"{problem}: it timed out"})
    if result.exit_code > SIGNALLED or result.exit_code < 0:
        signal = result.exit_code - SIGNALLED if result.exit_code > 0 else -result.exit_code
        error = f"{problem}: it was killed by signal {signal}"
        return Verdict(score=0.0, passed=False, details={**details, "error": error})
    tail = result.output.strip()[-500:]
    raise GraderError(
        f"{problem}; it exited {result.exit_code} without a reward to score, so it graded nothing "
        f"(Harbor counts this as a verifier failure). Its output ends: {tail!r}"
    )


async def _read_rewards(ctx: GradingContext, path: str, *, as_json: bool) -> Rewards:
    """The rewards in ``path``, as Harbor reads them: a flat object of finite numbers, or one number."""
    try:
        text = (await ctx.sandbox.read_file(path, limit=100_000)).decode("utf-8", errors="replace").strip()
    except WorkspaceFileError:
        return Rewards(None, absent=True)
    if not text:
        return Rewards(None, f"the reward file {path} is empty")
    if as_json:
        try:
            data = json.loads(text)
        except ValueError:
            return Rewards(None, f"the reward file {path} is not JSON")
        if not isinstance(data, dict) or not data or not all(_is_number(v) for v in data.values()):
            return Rewards(None, f"the reward file {path} is not a flat object of numbers")
        return Rewards({str(k): float(v) for k, v in data.items()})
    try:
        value = float(text)
    except ValueError:
        return Rewards(None, f"the reward file {path} does not hold a number: {text[:80]!r}")
    if not math.isfinite(value):
        return Rewards(None, f"the reward file {path} holds {text!r}")
    return Rewards({"reward": value})


def _is_number(value: Any) -> bool:
    """A finite number a double holds (``10**400`` in the JSON is none: no reward)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
