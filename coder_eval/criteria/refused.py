"""Criterion kinds of the original format that coder_eval refuses by name, saying what to use instead.

``uipath_eval`` ran ``uv run uipath eval AGENT EVAL_SET`` (the UiPath CLI, which coder_eval does not
ship) and compared the evaluators' scores with ``thresholds``. A task that has it fails at load time
(exit 2) with the replacement: a ``run_command`` that runs the same CLI and prints a score, or a
criterion plugin (docs/criteria.md#writing-a-criterion-plugin).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, field_validator

from coder_eval.criteria.base import CriterionSpec

UIPATH_EVAL = (
    "uipath_eval is not supported: it runs the UiPath CLI (uv run uipath eval AGENT EVAL_SET), which "
    "coder_eval does not ship. Use a run_command that runs it and prints the score, e.g. "
    "{type: run_command, command: 'uv run uipath eval main evals/set.json --no-report --output-file "
    "out.json && python $TASK_DIR/score.py out.json', score_from_stdout: true}, with the UiPath CLI in "
    "sandbox.python.env_packages; or a criterion plugin (docs/criteria.md, 'Writing a criterion plugin')"
)


class UiPathEval(CriterionSpec):
    """``uipath_eval``: refused at load time with what to use instead (see the module docstring)."""

    model_config = ConfigDict(extra="allow", frozen=True)  # its own fields are not the problem
    type: Literal["uipath_eval"] = "uipath_eval"

    @field_validator("type")
    @classmethod
    def _refused(cls, value: Any) -> Any:
        raise ValueError(UIPATH_EVAL)


REFUSED: dict[str, type[CriterionSpec]] = {"uipath_eval": UiPathEval}
"""Kinds of the original format that load only to say what to use instead."""
