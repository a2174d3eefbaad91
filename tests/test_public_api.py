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


def test_importing_coder_eval_does_not_import_the_analysis_stack() -> None:
    import subprocess
    import sys

    code = "import sys, coder_eval; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
