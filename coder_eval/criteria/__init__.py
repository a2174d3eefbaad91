"""Criterion kinds, one module each, listed in one literal table.

``Criterion`` is the discriminated union (on ``type``) used by task files: the built-in kinds, the
kinds installed plugins add (``coder_eval.plugins``: the ``coder_eval.criteria`` entry-point group and
``register(registry)`` hooks), and the original format's kinds that are refused with what to use
instead (``refused.py``). ``criterion_kinds()`` is the first two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Union

from pydantic import Field

from coder_eval.agents import AGENTS
from coder_eval.criteria.base import CriterionSpec, GradingContext, HiddenMaterial, Verdict
from coder_eval.criteria.classification_match import ClassificationMatch
from coder_eval.criteria.cli_called import CliCalled
from coder_eval.criteria.command_executed import CommandExecuted, CommandNotExecuted
from coder_eval.criteria.commands_efficiency import CommandsEfficiency
from coder_eval.criteria.file_check import FileCheck, FileContains, FileMatchesRegex
from coder_eval.criteria.file_exists import FileExists
from coder_eval.criteria.file_unchanged import FileUnchanged
from coder_eval.criteria.hidden_tests import HiddenTestsCriterion
from coder_eval.criteria.json_check import JsonCheck
from coder_eval.criteria.judges.agent import AgentJudge
from coder_eval.criteria.judges.baseline_judge import BaselineJudge
from coder_eval.criteria.judges.llm import LlmJudge
from coder_eval.criteria.message_matches import MessageMatches
from coder_eval.criteria.pytest_run import PytestCriterion
from coder_eval.criteria.recorded_calls import RecordedCalls
from coder_eval.criteria.reference_comparison import ReferenceComparison
from coder_eval.criteria.refused import REFUSED
from coder_eval.criteria.reward_file import RewardFile
from coder_eval.criteria.run_command import RunCommand
from coder_eval.criteria.skill_triggered import SkillTriggered
from coder_eval.criteria.tool_order import ToolOrder
from coder_eval.criteria.tool_used import ToolUsed
from coder_eval.plugins import Builtins, load_plugins

CRITERIA: dict[str, type[CriterionSpec]] = {
    "file_exists": FileExists,
    "file_contains": FileContains,
    "file_check": FileCheck,
    "file_matches_regex": FileMatchesRegex,
    "json_check": JsonCheck,
    "run_command": RunCommand,
    "hidden_tests": HiddenTestsCriterion,
    "pytest": PytestCriterion,
    "reference_comparison": ReferenceComparison,
    "reward_file": RewardFile,
    "file_unchanged": FileUnchanged,
    "recorded_calls": RecordedCalls,
    "cli_called": CliCalled,
    "command_executed": CommandExecuted,
    "command_not_executed": CommandNotExecuted,
    "tool_used": ToolUsed,
    "tool_order": ToolOrder,
    "message_matches": MessageMatches,
    "commands_efficiency": CommandsEfficiency,
    "skill_triggered": SkillTriggered,
    "classification_match": ClassificationMatch,
    "llm_judge": LlmJudge,
    "baseline_judge": BaselineJudge,
    "agent_judge": AgentJudge,
}

"""Built-in criterion kinds."""

PLUGIN_CRITERIA: dict[str, type[CriterionSpec]] = load_plugins(
    Builtins([*CRITERIA, *REFUSED], AGENTS, CriterionSpec)
).criteria
"""Criterion kinds added by installed plugins (loaded once, now: the union below is built from them)."""


def criterion_kinds() -> dict[str, type[CriterionSpec]]:
    """Every criterion kind a task may use: built-in, then added by plugins."""
    return {**CRITERIA, **PLUGIN_CRITERIA}


if TYPE_CHECKING:
    Criterion = CriterionSpec
else:  # the table becomes a union discriminated on `type`, so errors name the kind
    Criterion = Annotated[
        Union[(*criterion_kinds().values(), *REFUSED.values())],
        Field(discriminator="type"),
    ]

__all__ = [
    "CRITERIA",
    "PLUGIN_CRITERIA",
    "Criterion",
    "CriterionSpec",
    "GradingContext",
    "HiddenMaterial",
    "Verdict",
    "criterion_kinds",
]
