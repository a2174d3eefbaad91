"""The task's tests as they are before the agent runs: what each pytest-based criterion expects.

Example::

    prepared = await with_expected_tests(task, stage.sandbox, prepared, pytest_config)
    prepared[0]   # ExpectedTests(ids=frozenset({"hidden_tests/test_calc.py::test_add", ...}), ...)

For each criterion with a ``tests_command`` (``hidden_tests``, ``pytest``, a ``run_command`` that runs
pytest), the command runs with ``--collect-only`` in a verifier seeded from the workspace as set-up
left it, with the hidden tests in place and the task's own pytest configuration: nothing the agent
did exists yet. What pytest collected there becomes the criterion's ``prepared`` state, and grading
compares the run's test ids with it (``criteria/expected_tests.py``). The set-up phase and
``coder-eval regrade`` (which rebuilds the pristine workspace) both do this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coder_eval.criteria.expected_tests import ExpectedTests, conftest_hashes, expected_tests
from coder_eval.sandbox.base import Sandbox
from coder_eval.task import TaskSpec
from coder_eval.verifier import Verifier, open_verifier

COLLECT_ONLY = "--collect-only -q"


async def with_expected_tests(
    task: TaskSpec, sandbox: Sandbox, prepared: Sequence[Any], pytest_config: tuple[str, bytes] | None
) -> list[Any]:
    """``prepared`` with each pytest-based criterion's expected tests, collected from ``sandbox``'s
    workspace as it is now (before the agent); other criteria keep their state."""
    commands = {i: c.tests_command() for i, c in enumerate(task.success_criteria)}
    wanted = {i: command for i, command in commands.items() if command is not None}
    if not wanted:
        return list(prepared)
    from coder_eval.runner import take_snapshot  # the runner builds on the stage, which calls this

    with await take_snapshot(sandbox) as snapshot:
        verifier = await open_verifier(task, snapshot, pytest_config=pytest_config)
        try:
            conftests = await conftest_hashes(verifier.sandbox)
            found = {
                i: await _collect(verifier, command, task, i, conftests) for i, command in wanted.items()
            }
        finally:
            await verifier.close()
    return [found.get(i) or state for i, state in enumerate(prepared)]


async def _collect(
    verifier: Verifier, command: str, task: TaskSpec, index: int, conftests: dict[str, str]
) -> ExpectedTests | None:
    """What ``command`` collects in the pristine verifier (None when no pytest session finished)."""
    await verifier.clear_reports()
    options = f"{verifier.sandbox.env.get('PYTEST_ADDOPTS', '')} {COLLECT_ONLY}".strip()
    timeout = getattr(task.success_criteria[index], "timeout", None)
    await verifier.sandbox.exec(command, timeout=timeout, env={"PYTEST_ADDOPTS": options})
    reports = await verifier.pytest_reports()
    return expected_tests(reports, conftests) if reports else None
