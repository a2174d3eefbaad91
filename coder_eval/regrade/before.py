"""The agent's side of an episode as it was before the agent ran, rebuilt for re-grading.

Example::

    before = await before_agent(task, agent_paths={"workdir": "/tmp/coder_eval-x/work"}, leftovers=[])
    before.prepared        # each criterion's state from the fresh workspace (file hashes ...)
    before.pytest_config   # the task's own pytest configuration, as the verifier uses it

A fresh sandbox of the task's driver is seeded from its templates and ``pre_run`` runs, as in the
``setup`` phase; no agent, model endpoint or recorded CLI is started. What the criteria prepare there
and the task's pytest configuration are what the runner took before the agent ran.
"""

from __future__ import annotations

from coder_eval.episode.pristine import with_expected_tests
from coder_eval.episode.runner import BeforeAgent
from coder_eval.episode.stage import capture_pytest_config, close_quietly
from coder_eval.errors import CoderEvalError
from coder_eval.sandbox import Provision, make_sandbox
from coder_eval.task import TaskSpec


async def before_agent(task: TaskSpec, agent_paths: dict[str, str], leftovers: list[str]) -> BeforeAgent:
    """The pre-agent state of ``task``'s criteria (see the module docstring); a sandbox that cannot
    be removed is noted in ``leftovers``."""
    spec = task.sandbox
    provision = Provision(
        role="agent",
        sources=tuple(spec.template_sources),
        env=dict(spec.env),
        path_dirs=tuple(spec.mock_path_dirs),
        network="none",
        limits=spec.limits,
    )
    sandbox = await make_sandbox(spec, provision)
    try:
        for step in task.pre_run:
            result = await sandbox.exec(step.command, timeout=step.timeout)
            if result.exit_code != 0 and step.fail_on_error:
                raise CoderEvalError(
                    f"pre_run {step.command!r} exited {result.exit_code} while rebuilding the workspace "
                    f"as it was before the agent: {result.output[-500:]}"
                )
        prepared = [await criterion.prepare(sandbox) for criterion in task.success_criteria]
        config = await capture_pytest_config(sandbox)
        prepared = await with_expected_tests(task, sandbox, prepared, config)
    finally:
        await close_quietly(sandbox, leftovers)
    return BeforeAgent(prepared, config, agent_paths, leftovers)
