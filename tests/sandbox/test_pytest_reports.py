"""The verdict plugin's reports: parsed when well-formed, skipped (proving nothing) otherwise."""

from __future__ import annotations

import json

from coder_eval.sandbox.pytest_reports import read_reports

GOOD = {
    "exitstatus": 1,
    "collected": 2,
    "deselected": 0,
    "counts": {"passed": 1, "failed": 1},
    "tests": {"t.py::a": "passed", "t.py::b": "failed"},
    "ids": ["t.py::a", "t.py::b"],
    "marked": [],
    "errors": ["u.py"],
    "skipped": [],
}


def test_a_report_is_read_with_its_ids_and_broken_files() -> None:
    (report,) = read_reports([json.dumps(GOOD).encode()])

    assert (report.passed, report.tests["t.py::b"], report.ids, report.broken) == (
        1,
        "failed",
        ("t.py::a", "t.py::b"),
        ("u.py",),
    )


def test_malformed_reports_are_skipped() -> None:
    documents = [
        b"not json",
        b"[" * 100_000,
        json.dumps({**GOOD, "collected": 1e999}).encode(),
        ("{" + '"exitstatus": 1' + "0" * 5000 + "}").encode(),
        json.dumps({**GOOD, "counts": [1]}).encode(),
        json.dumps({**GOOD, "ids": "t.py::a"}).encode(),
    ]

    assert read_reports(documents) == []
