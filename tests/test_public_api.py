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


def test_the_package_imports_its_heavy_members_on_first_use() -> None:
    """``import coder_eval`` (and so ``coder-eval --version``) loads no runner; the names still resolve."""
    import subprocess
    import sys

    code = (
        "import sys, coder_eval; before = 'coder_eval.episode.runner' in sys.modules; "
        "from coder_eval import EpisodePlan; from coder_eval.episode.runner import EpisodePlan as plan; "
        "print(before, EpisodePlan is plan)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_dir_lists_the_members_not_yet_imported() -> None:
    assert set(coder_eval.__all__) <= set(dir(coder_eval))


def test_an_unknown_member_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'run_suite'"):
        coder_eval.run_suite  # noqa: B018
