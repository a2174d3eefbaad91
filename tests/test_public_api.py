"""The public surface of ``coder_eval``: a change to it must be deliberate."""

from __future__ import annotations

import coder_eval

EXPECTED = {
    "SCHEMA_VERSION",
    "CoderEvalError",
    "EpisodePlan",
    "ExitCode",
    "TaskSpec",
    "TrajectoryWriter",
    "__version__",
    "load_tasks",
    "plan_episodes",
    "read_trajectory",
    "run_batch",
    "run_episode",
}


def test_exported_members() -> None:
    assert set(coder_eval.__all__) == EXPECTED
    assert all(hasattr(coder_eval, name) for name in coder_eval.__all__)


def test_the_command_line_starts_without_the_slow_imports() -> None:
    """pandas, the API client and jsonschema load only when an analysis, a judge or a schema needs them."""
    import subprocess
    import sys

    slow = ["pandas", "anthropic", "jsonschema", "claude_agent_sdk", "scipy"]
    code = f"import sys, coder_eval.cli; print([m for m in {slow!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
