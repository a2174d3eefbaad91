"""The verifier's pytest verdict plugin, and the reports it writes outside the workspace.

Example::

    install_toolchain(tools)                  # writes PYTEST_PLUGIN as coder_eval_pytest.py
    reports = read_reports(verdict_files)     # one PytestReport per finished pytest session
    reports[0].tests                          # {"hidden_tests/test_calc.py::test_add": "failed", ...}

The plugin records, per session, every collected test id, the outcome of each test, the ids that
carry a ``skip`` or ``skipif`` marker, the files whose collection failed or was skipped, and whether
pytest's own evaluation of a test's skip markers (made at set-up, before any fixture runs) said to
skip it. A test skipped at set-up for any other reason (a fixture, the code under test) is
``skipped_setup``, which counts as not passed; one skipped by its marker is ``skipped_marker``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

PYTEST_PLUGIN = r'''
"""coder_eval's verdict plugin: what pytest counted, written outside the workspace at session end."""
import json, os, time

import pytest

_state = {"tests": {}, "deselected": 0, "ids": [], "marked": [], "errors": [], "skipped": []}


def pytest_deselected(items):
    _state["deselected"] += len(items)


def pytest_collectreport(report):
    if report.failed:
        _state["errors"].append(report.nodeid)
    elif report.skipped:
        _state["skipped"].append(report.nodeid)


def pytest_collection_finish(session):
    _state["ids"] = [item.nodeid for item in session.items]
    _state["marked"] = [
        item.nodeid for item in session.items
        if any(mark.name in ("skip", "skipif") for mark in item.iter_markers())
    ]


def _marker_says_skip(item):
    try:
        from _pytest.skipping import evaluate_skip_marks
        return evaluate_skip_marks(item) is not None
    except Exception:
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    test = _state["tests"].setdefault(item.nodeid, {"outcome": "passed"})
    test["marker_skip"] = _marker_says_skip(item)


def pytest_runtest_logreport(report):
    test = _state["tests"].setdefault(report.nodeid, {"outcome": "passed"})
    wasxfail = hasattr(report, "wasxfail")
    if report.when == "setup" and report.skipped and not wasxfail:
        test["outcome"] = "skipped_marker" if test.get("marker_skip") else "skipped_setup"
    elif report.failed:
        test["outcome"] = "failed" if report.when == "call" else "error"
    elif report.when == "call" and report.skipped:
        test["outcome"] = "xfailed" if wasxfail else "skipped_call"
    if report.when == "call":
        test["ran"] = True


def _outcome(test):
    return test["outcome"] if test.get("ran") or test["outcome"] != "passed" else "not_run"


def pytest_sessionfinish(session, exitstatus):
    folder = os.environ.get("CODER_EVAL_VERDICTS")
    if not folder:
        return
    tests = {nodeid: _outcome(test) for nodeid, test in _state["tests"].items()}
    counts = {}
    for outcome in tests.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    report = {"exitstatus": int(exitstatus), "collected": len(_state["ids"]),
              "deselected": _state["deselected"], "counts": counts, "tests": tests,
              "ids": _state["ids"], "marked": _state["marked"], "errors": _state["errors"],
              "skipped": _state["skipped"], "finished": True}
    name = f"pytest-{os.getpid()}-{time.monotonic_ns()}.json"
    tmp = os.path.join(folder, "." + name)
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    os.replace(tmp, os.path.join(folder, name))
'''

MAX_REPORT_BYTES = 64 * 1024 * 1024
"""A verdict file larger than this is not read (it proves nothing)."""


@dataclass(frozen=True)
class PytestReport:
    """What one pytest session counted, as the verdict plugin wrote it."""

    exitstatus: int
    collected: int
    deselected: int
    counts: dict[str, int]
    tests: dict[str, str] = field(default_factory=dict)
    """Each test id that reached set-up, and its outcome (``passed``, ``failed``, ``skipped_setup`` ...)."""
    ids: tuple[str, ...] = ()
    """Every collected test id, in collection order."""
    marked: frozenset[str] = frozenset()
    """Collected ids carrying a ``skip`` or ``skipif`` marker."""
    broken: tuple[str, ...] = ()
    """Files (collector ids) whose collection failed or was skipped (a module-level skip)."""

    @property
    def passed(self) -> int:
        return self.counts.get("passed", 0)

    @property
    def graded(self) -> int:
        """Tests that count: collected, less those the test author's markers skipped."""
        return self.collected - self.counts.get("skipped_marker", 0)


def read_reports(documents: Iterable[bytes]) -> list[PytestReport]:
    """Parse the plugin's report files; an unreadable or malformed one is skipped (it proves nothing)."""
    reports = []
    for document in documents:
        try:
            reports.append(_report(json.loads(document)))
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError):
            continue
    return reports


def _report(data: dict[str, object]) -> PytestReport:
    tests = data.get("tests", {})
    counts = data["counts"]
    if not isinstance(tests, dict) or not isinstance(counts, dict):
        raise TypeError("not a verdict report")
    return PytestReport(
        exitstatus=_int(data["exitstatus"]),
        collected=_int(data["collected"]),
        deselected=_int(data["deselected"]),
        counts={str(k): _int(v) for k, v in counts.items()},
        tests={str(k): str(v) for k, v in tests.items()},
        ids=tuple(_strings(data.get("ids", []))),
        marked=frozenset(_strings(data.get("marked", []))),
        broken=tuple([*_strings(data.get("errors", [])), *_strings(data.get("skipped", []))]),
    )


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not a count")
    return value


def _strings(value: object) -> list[str]:
    if not isinstance(value, list):
        raise TypeError(f"{value!r} is not a list")
    return [str(item) for item in value]
