"""Grading a pytest run by test ids: the tests the task's pytest command collected before the agent ran.

Example::

    expected = expected_tests(pristine_reports, pristine_conftests)
    env = await pytest_env(ctx.sandbox, expected)          # the agent's conftest.py files set aside
    verdict = graded_verdict(result, reports, expected)    # every expected id must pass

Before the agent runs, each pytest-based criterion's command is run with ``--collect-only`` in a
verifier seeded from the pristine workspace (``coder_eval/episode/pristine.py``), with the hidden tests in
place. What it collected is the expected set: the test ids, those carrying a ``skip`` or ``skipif``
marker, the files that could not be collected then (code the agent is to write: the tests collected
from them after the run count), and the sha256 of every ``conftest.py``. After the run:

- an expected id that is missing (a module-level skip, a collection error, a deselection) or did not
  pass counts as not passed; ids the agent added are reported, not graded;
- a skip is the author's (left out of the grade) only when the test carried a ``skip``/``skipif``
  marker before the agent ran and pytest's evaluation of its markers at set-up said to skip; a skip
  from a fixture, from the code under test or from the test body is not passed;
- every ``conftest.py`` that is not byte-identical to the pristine one at its path is imported by
  pytest as any code is, but never registered as a plugin (``-p no:<path>``): its hooks and fixtures
  are not used, so it cannot rewrite reports.

When the pristine workspace had no test for the command (the agent writes the tests), the tests the
run collected are graded, as counted by pytest, and nothing is set aside.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from coder_eval.criteria.base import Verdict
from coder_eval.criteria.seen import seen_of
from coder_eval.errors import WorkspaceFileError
from coder_eval.sandbox.base import ExecResult, Sandbox
from coder_eval.sandbox.pytest_reports import PytestReport

MAX_SET_ASIDE = 200
"""More changed ``conftest.py`` files than this cannot be set aside (one option each): a failure."""
FAILING = ("failed", "error", "skipped_setup", "skipped_call", "xfailed", "not_run")
"""Per-test outcomes that are not a pass, worst first when one id ran in several sessions."""


@dataclass(frozen=True)
class ExpectedTests:
    """What a pytest command collected in the pristine workspace (see the module docstring)."""

    ids: frozenset[str] = frozenset()
    marked: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()
    """Test files that could not be collected before the agent ran: their tests are those collected after."""
    conftests: Mapping[str, str] = field(default_factory=dict)
    """Workspace-relative path of each ``conftest.py`` -> its sha256, before the agent ran."""

    @property
    def known(self) -> bool:
        """The pristine workspace had tests for the command: those are what is graded."""
        return bool(self.ids or self.files)


def expected_tests(reports: Sequence[PytestReport], conftests: Mapping[str, str]) -> ExpectedTests:
    """The expected set from the collect-only sessions of the pristine workspace."""
    return ExpectedTests(
        ids=frozenset(i for r in reports for i in r.ids),
        marked=frozenset(i for r in reports for i in r.marked),
        files=frozenset(_file(b) for r in reports for b in r.broken),
        conftests=dict(conftests),
    )


async def conftest_hashes(sandbox: Sandbox) -> dict[str, str]:
    """``{path: sha256}`` of every ``conftest.py`` in the workspace (``link`` for a symbolic link)."""
    files = set(await sandbox.glob("**/conftest.py"))
    hashes = {}
    for path in sorted(set(await sandbox.glob("**/conftest.py", include_links=True)) | files):
        try:
            data = await sandbox.read_file(path) if path in files else None
        except WorkspaceFileError:
            data = None
        hashes[path] = hashlib.sha256(data).hexdigest() if data is not None else "link"
    return hashes


async def pytest_env(sandbox: Sandbox, expected: ExpectedTests | None) -> dict[str, str]:
    """The environment of a graded pytest run: the verifier's options, with every ``conftest.py``
    that differs from the pristine one set aside; ``WorkspaceFileError`` when there are too many."""
    if expected is None or not expected.known:
        return {}
    now = await conftest_hashes(sandbox)
    changed = sorted(path for path, digest in now.items() if expected.conftests.get(path) != digest)
    if not changed:
        return {}
    if len(changed) > MAX_SET_ASIDE:
        raise WorkspaceFileError(
            f"{len(changed)} conftest.py files were added or changed; at most {MAX_SET_ASIDE} are set aside"
        )
    root = sandbox.workdir.rstrip("/")
    options = [f"-p no:{shlex.quote(f'{root}/{path}')}" for path in changed]
    return {"PYTEST_ADDOPTS": " ".join([sandbox.env.get("PYTEST_ADDOPTS", ""), *options]).strip()}


def graded_verdict(
    result: ExecResult, reports: Sequence[PytestReport], expected: ExpectedTests | None
) -> Verdict:
    """The verdict of a pytest run, by test id when the expected set is known (see the module
    docstring), else by what the run's sessions counted. The score is the passed share."""
    details: dict[str, Any] = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "output": result.output[-3000:],
        "sessions": len(reports),
    }
    if not reports:
        details["error"] = "pytest never finished its session (killed, timed out, or the code exited it)"
        return Verdict(score=0.0, passed=False, details=details)
    outcomes = _outcomes(reports)
    collected = {i for r in reports for i in r.ids}
    graded, missing = _graded(expected, collected, outcomes)
    passed = sorted(i for i in graded if outcomes.get(i) == "passed")
    total = len(graded) + len(missing)
    not_passed = sorted(i for i in graded if outcomes.get(i) != "passed")
    details.update(collected=len(collected), graded=total, passed=len(passed), counts=_counts(reports))
    if not_passed or missing:
        details["not_passed"] = [
            *missing,
            *(f"{i} ({outcomes.get(i, 'not collected')})" for i in not_passed),
        ][:50]
        details |= seen_of("the test output", failure_lines(result.output))
    if expected is not None and expected.known and collected - graded - _author_skipped(expected, outcomes):
        details["not_graded"] = len(collected - graded - _author_skipped(expected, outcomes))
    exit_ok = result.exit_code == 0 or (expected is not None and expected.known)
    ok = exit_ok and not result.timed_out and total > 0 and len(passed) == total
    if total == 0:
        details["error"] = "no test was collected"
    return Verdict(score=len(passed) / total if total else 0.0, passed=ok, details=details)


def failure_lines(output: str, most: int = 3) -> str:
    """What a failing pytest run said went wrong: its first ``E`` lines (the assertion and what it
    compared), else its last lines.

    Example: ``failure_lines("F\\nE   assert -1 == 5\\n1 failed")`` -> ``"E   assert -1 == 5"``.
    """
    lines = output.splitlines()
    said = [line.rstrip() for line in lines if line.startswith("E ")][:most]
    return "\n".join(said or [line.rstrip() for line in lines if line.strip()][-most:])


def _graded(
    expected: ExpectedTests | None, collected: set[str], outcomes: Mapping[str, str]
) -> tuple[set[str], list[str]]:
    """The ids that count (the author's skips left out), and expected files nothing was collected from."""
    if expected is None or not expected.known:
        return {i for i in collected if outcomes.get(i) != "skipped_marker"}, []
    from_files = {i for i in collected if _file(i) in expected.files}
    universe = set(expected.ids) | from_files
    missing = sorted(
        f"{f} (nothing collected)" for f in expected.files if not any(_file(i) == f for i in from_files)
    )
    return universe - _author_skipped(expected, outcomes), missing


def _author_skipped(expected: ExpectedTests, outcomes: Mapping[str, str]) -> set[str]:
    """Skipped by a marker the test carried before the agent ran (ids first seen after the run: by
    the marker pytest saw)."""
    return {
        i
        for i, outcome in outcomes.items()
        if outcome == "skipped_marker" and (i in expected.marked or i not in expected.ids)
    }


def _outcomes(reports: Sequence[PytestReport]) -> dict[str, str]:
    """Each test id's outcome over every session (the worst, when one id ran more than once)."""
    merged: dict[str, str] = {}
    for report in reports:
        for nodeid, outcome in report.tests.items():
            if nodeid not in merged or _rank(outcome) < _rank(merged[nodeid]):
                merged[nodeid] = outcome
    return merged


def _rank(outcome: str) -> int:
    return FAILING.index(outcome) if outcome in FAILING else len(FAILING)


def _counts(reports: Sequence[PytestReport]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for report in reports:
        for key, value in report.counts.items():
            counts[key] = counts.get(key, 0) + value
    return counts


def _file(nodeid: str) -> str:
    """The test file of a test or collector id (``tests/test_a.py::test_b[1]`` -> ``tests/test_a.py``)."""
    return nodeid.split("::", 1)[0]
