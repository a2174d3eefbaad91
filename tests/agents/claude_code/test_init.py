"""The ``claude-code`` package: its agent loads on use, and loading it (or the agent judge, which runs
the same SDK) does not build jsonschema's ``iri`` grammar, about 1 s of every Claude Code run's start."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import REPO

LOAD = """
import sys
import {module}
from claude_agent_sdk import create_sdk_mcp_server, tool
import jsonschema

@tool("submit", "a tool with a schema", {{"type": "object", "properties": {{"n": {{"type": "integer"}}}}}})
async def submit(args):
    return {{"content": []}}

create_sdk_mcp_server("s", tools=[submit])
checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
print(sys.modules.get("rfc3987_syntax") is not None, "iri" in checker.checkers, checker.conforms("x", "ipv4"))
"""


@pytest.mark.parametrize(
    "module", ["coder_eval.agents.claude_code.agent", "coder_eval.criteria.judges.agent_session"]
)
def test_loading_the_sdk_through_coder_eval_skips_jsonschemas_iri_grammar(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOAD.format(module=module)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.split() == ["False", "False", "False"], (
        done.stderr
    )  # "x" is no ipv4: formats still checked


def test_the_agent_class_loads_on_use_and_an_unknown_name_is_refused() -> None:
    import coder_eval.agents.claude_code as package

    assert package.ClaudeCodeAgent.__name__ == "ClaudeCodeAgent"
    with pytest.raises(AttributeError, match="NoSuchAgent"):
        package.NoSuchAgent  # noqa: B018
