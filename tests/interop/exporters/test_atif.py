"""The ATIF models refuse what the format refuses: unknown fields, gaps in step ids, results for calls
a step did not make, agent-only fields on other steps, anonymous embedded sub-agents."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from coder_eval.interop.exporters.atif import AtifTrajectory


def document(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "agent": {"name": "claude-code", "version": "2.1.0"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "",
                "tool_calls": [{"tool_call_id": "a", "function_name": "Bash", "arguments": {}}],
                "observation": {"results": [{"source_call_id": "a", "content": "ok"}]},
            },
        ],
    }
    return base | changes


def test_a_well_formed_document_validates() -> None:
    doc = AtifTrajectory.model_validate(document())
    assert doc.schema_version == "ATIF-v1.7" and doc.steps[1].tool_calls is not None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"colour": "red"}, "Extra inputs are not permitted"),
        ({"steps": []}, "at least 1 item"),
        ({"steps": [{"step_id": 2, "source": "user", "message": "hi"}]}, "step_id is 2, expected 1"),
        (
            {
                "steps": [
                    {
                        "step_id": 1,
                        "source": "user",
                        "message": "",
                        "observation": {"results": [{"source_call_id": "x"}]},
                    }
                ]
            },
            "results for calls it did not make: ['x']",
        ),
        (
            {"steps": [{"step_id": 1, "source": "user", "message": "", "model_name": "m"}]},
            "model_name only belong on agent steps",
        ),
        (
            {
                "subagent_trajectories": [
                    {
                        "agent": {"name": "a", "version": "1"},
                        "steps": [{"step_id": 1, "source": "user", "message": ""}],
                    }
                ]
            },
            "unique trajectory_ids",
        ),
        ({"schema_version": "ATIF-v1.8"}, "ATIF-v1.7"),
    ],
)
def test_what_the_format_refuses_is_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        AtifTrajectory.model_validate(document(**changes))
