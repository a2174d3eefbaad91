"""Grading pytest runs by the test ids collected before the agent ran."""

from __future__ import annotations

import asyncio

from coder_eval.criteria.expected_tests import ExpectedTests, graded_verdict, pytest_env
from coder_eval.criteria.hidden_tests import runs_pytest
from coder_eval.sandbox import ExecResult, FakeSandbox
from coder_eval.sandbox.pytest_reports import PytestReport

IDS = ("t/test_a.py::test_1", "t/test_a.py::test_2", "t/test_b.py::test_3", "t/test_b.py::test_skip")
EXPECTED = ExpectedTests(ids=frozenset(IDS), marked=frozenset({IDS[3]}), conftests={"t/conftest.py": "abc"})
DONE = ExecResult(0, "", "", 0.1)


def session(tests: dict[str, str], exit_code: int = 0) -> PytestReport:
    return PytestReport(exit_code, len(tests), 0, {}, tests=tests, ids=tuple(tests))


def score(tests: dict[str, str], expected: ExpectedTests | None = EXPECTED) -> tuple[float, bool | None]:
    verdict = graded_verdict(DONE, [session(tests)], expected)
    return round(verdict.score, 2), verdict.passed


def test_every_expected_id_passing_passes_with_the_authors_skip_left_out() -> None:
    tests = {i: "passed" for i in IDS[:3]} | {IDS[3]: "skipped_marker"}

    assert score(tests) == (1.0, True)


def test_a_missing_id_counts_as_not_passed() -> None:
    assert score({IDS[0]: "passed", IDS[1]: "passed", IDS[3]: "skipped_marker"}) == (0.67, False)


def test_skips_other_than_by_a_pristine_marker_count_as_not_passed() -> None:
    tests = {IDS[0]: "passed", IDS[1]: "skipped_setup", IDS[2]: "skipped_marker", IDS[3]: "skipped_marker"}

    assert score(tests) == (0.33, False)  # test_3 carried no skip marker before the agent ran


def test_tests_the_agent_added_are_not_graded() -> None:
    tests = {i: "passed" for i in IDS[:2]} | {
        IDS[2]: "failed",
        IDS[3]: "skipped_marker",
        "t/test_new.py::x": "passed",
    }
    verdict = graded_verdict(DONE, [session(tests)], EXPECTED)

    assert (round(verdict.score, 2), verdict.details["not_graded"]) == (0.67, 1)


def test_tests_of_files_that_could_not_be_collected_before_count_once_collected() -> None:
    expected = ExpectedTests(ids=frozenset(IDS[:2]), files=frozenset({"t/test_new.py"}))

    assert score({**{i: "passed" for i in IDS[:2]}, "t/test_new.py::test_x": "failed"}, expected) == (
        0.67,
        False,
    )
    assert score({i: "passed" for i in IDS[:2]}, expected) == (0.67, False)  # the file yields nothing


def test_without_an_expected_set_the_collected_tests_count() -> None:
    assert score({IDS[0]: "passed", IDS[1]: "failed"}, None) == (0.5, False)


def test_the_worst_outcome_of_an_id_run_twice_counts() -> None:
    first, second = session({IDS[0]: "passed"}), session({IDS[0]: "failed"})

    assert graded_verdict(DONE, [first, second], ExpectedTests(ids=frozenset(IDS[:1]))).passed is False


def test_conftest_files_that_differ_from_the_pristine_ones_are_set_aside() -> None:
    fake = FakeSandbox({"t/conftest.py": "changed", "conftest.py": "new", "t/test_a.py": ""})
    fake.env = {"PYTEST_ADDOPTS": "-p coder_eval_pytest"}

    env = asyncio.run(pytest_env(fake, EXPECTED))

    root = fake.workdir
    assert env == {
        "PYTEST_ADDOPTS": f"-p coder_eval_pytest -p no:{root}/conftest.py -p no:{root}/t/conftest.py"
    }
    assert asyncio.run(pytest_env(fake, ExpectedTests())) == {}  # the agent's own tests: nothing to protect


def test_commands_that_start_pytest_are_recognised() -> None:
    runs = ["pytest", "python -m pytest -q t", "cd app && python3 -m pytest", "timeout 60 uv run pytest -x"]
    others = ["pip show pytest", "echo pytest", "python -c 'import pytest'", "make test"]

    assert [runs_pytest(c) for c in runs] == [True] * 4
    assert [runs_pytest(c) for c in others] == [False] * 4


def test_a_failing_run_says_which_tests_and_what_the_assertion_compared() -> None:
    from coder_eval.failures import criterion_reason
    from tests.test_failures import verdict as recorded

    output = (
        "F..\n=== FAILURES ===\n    assert add(2, 2) == 4\nE   assert 5 == 4\nE    +  where 5 = add(2, 2)\n"
    )
    tests = {IDS[0]: "failed", IDS[1]: "passed", IDS[2]: "passed", IDS[3]: "skipped_marker"}
    found = graded_verdict(ExecResult(1, output, "", 0.1), [session(tests, 1)], EXPECTED)
    assert found.details["seen"] == "'E   assert 5 == 4\\nE    +  where 5 = add(2, 2)'"
    said = criterion_reason(recorded(found.details, kind="hidden_tests"))
    assert said.startswith("exit 1: ") and "; not passed: t/test_a.py::test_1 (failed); " in said
    assert said.endswith("in the test output: 'E assert 5 == 4\\nE + where 5 = add(2, 2)'")  # one line
