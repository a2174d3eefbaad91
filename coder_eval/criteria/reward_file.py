"""``reward_file``: run a verifier script in the finished workspace and score what it writes.

Example::

    - type: reward_file
      command: bash checks/verify.sh
      reward_file: logs/reward.txt     # one number
      reward_json: logs/reward.json    # or a flat object of numbers; wins when both are written

The reward files are removed before the command runs, so only what this run writes counts. The score
is the number in ``reward_file``, or from ``reward_json`` its ``reward_key`` value (default
``reward``) when it has one, else the mean of its values; it passes at ``pass_threshold`` (default
1). A script that writes no readable reward scores 0 and says why in the details: the agent's work
did not get the script that far, or the task is broken (``coder-eval validate`` finds that). Harbor
task directories load with this criterion (``coder_eval.interop.task_readers.harbor``).
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.errors import WorkspaceFileError
from coder_eval.sandbox.base import SandboxPath

OUTPUT_TAIL = 3000
"""Characters of the script's output kept in the details."""


class RewardFile(CriterionSpec):
    type: Literal["reward_file"] = "reward_file"
    needs = frozenset({"workspace", "commands"})
    command: str = Field(description="Shell command run from the workspace root (the verifier script).")
    reward_file: SandboxPath = Field(default="reward.txt", description="File holding one number.")
    reward_json: SandboxPath | None = Field(
        default=None, description="File holding a flat object of numbers."
    )
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
        for path in files:
            rewards, problem = await _read_rewards(ctx, path, as_json=path == self.reward_json)
            if problem is not None:
                details.setdefault("problems", []).append(problem)
            elif rewards is not None:
                score = rewards.get(self.reward_key, sum(rewards.values()) / len(rewards))
                return Verdict(score=score, details={**details, "reward_source": path, "rewards": rewards})
        details["error"] = "the verifier script wrote no readable reward" + (
            " (it timed out)" if result.timed_out else ""
        )
        return Verdict(score=0.0, passed=False, details=details)


async def _read_rewards(
    ctx: GradingContext, path: str, *, as_json: bool
) -> tuple[dict[str, float] | None, str | None]:
    """The rewards in ``path`` (None when it was not written), or what is wrong with it."""
    try:
        text = (await ctx.sandbox.read_file(path, limit=100_000)).decode("utf-8", errors="replace").strip()
    except WorkspaceFileError:
        return None, None
    if as_json:
        try:
            data = json.loads(text)
        except ValueError:
            return None, f"{path} is not JSON"
        if not isinstance(data, dict) or not data or not all(_is_number(v) for v in data.values()):
            return None, f"{path} is not a flat object of numbers"
        return {str(k): float(v) for k, v in data.items()}, None
    try:
        value = float(text)
    except ValueError:
        return None, f"{path} does not hold a number: {text[:80]!r}"
    return ({"reward": value}, None) if math.isfinite(value) else (None, f"{path} holds {text!r}")


def _is_number(value: Any) -> bool:
    """A finite number a double holds (``10**400`` in the JSON is none: no reward)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
