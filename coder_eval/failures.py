"""Why a criterion failed and why an episode did not pass, in words, from what the graders recorded.

Example::

    criterion_reason(verdict)   # 'exit 1: 2 failed, 2 passed; FAILED hidden_tests/test_calc.py::test_add'
    criterion_reason(check)     # "failed: patterns[0] '^3$' not found in out.txt: '25\\n'"
    evidence(verdict)           # [('checks', 'the hidden unit tests pass'), ('exit_code', '1'), ...]
    episode_reason(end, verdicts)  # 'hidden-tests (the hidden unit tests pass): exit 1: 2 failed, ...'

``coder-eval show``, the transcript page and the end-of-run summary all say it this way. A check
that compared the agent's output with an expectation says what it saw (``seen`` and ``seen_in``, a
bounded, escaped excerpt the criterion recorded: ``coder_eval.criteria.seen``). The text holds what
the agent wrote (test output, file names): print it through ``coder_eval.terminal.inert``, and escape
it in HTML.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from coder_eval.trajectory import CriterionResult, EpisodeEnd

REASON_CHARS = 240
"""The longest one-line reason."""
EVIDENCE_LINES = 25
"""Lines of a long recorded text (a test run's output) shown as evidence: its last ones."""
LIST_ITEMS = 10
"""Items of a recorded list of texts (the checks that failed) shown, one a line."""
VALUE_CHARS = 400
"""The longest rendering of one structured detail (a list, a mapping)."""


def criterion_reason(verdict: CriterionResult) -> str:
    """One line saying why ``verdict`` failed: the grader's error, the checks that failed, the test
    counts, the labels, or the command's exit and last line of output, in that order of preference."""
    details = verdict.details
    if verdict.error:
        return _clip(f"grader error: {verdict.error}")
    failed, labels = _failed_checks(details), _labels(verdict)
    checks = " ".join(p for p in (failed, _seen(details) if failed and not labels else "") if p)
    parts = [_said(details.get("error")), checks, labels, _exit(details), _not_passed(details)]
    parts.append("" if failed or labels else _seen(details))
    if details.get("timed_out"):
        parts.append("timed out")
    if not any(parts) and "pass_votes" in details:
        parts.append(f"{details['pass_votes']} passing votes, {details.get('min_pass_votes')} needed")
    text = "; ".join(p for p in parts if p)
    return _clip(text or f"score {verdict.score:.2f}{_compact(details)}")


def episode_reason(end: EpisodeEnd, verdicts: Sequence[CriterionResult]) -> str:
    """Why an episode did not pass: how it ended when that was not ``completed`` (with its error),
    then its first failing gating criterion, by id and description, and that criterion's reason."""
    parts = []
    if end.status != "completed" or end.outcome == "invalid":
        parts.append(f"{end.status}: {end.error}" if end.error else end.status)
    failing = next((v for v in verdicts if v.gating and not v.passed), None)
    if failing is not None and end.outcome != "invalid":
        described = f" ({failing.description})" if failing.description else ""
        parts.append(f"{failing.criterion_id}{described}: {criterion_reason(failing)}")
    return _clip("; ".join(parts) or f"{end.outcome} ({end.status})")


def evidence(verdict: CriterionResult) -> list[tuple[str, str]]:
    """What ``verdict`` recorded, one ``(name, text)`` per entry: what it checks (its description),
    the grader's error, then each detail, texts of several lines last; a long text keeps its last
    :data:`EVIDENCE_LINES` lines, a list of texts one item a line."""
    rows = [("checks", verdict.description)] if verdict.description else []
    if verdict.error:
        rows.append(("error", verdict.error))
    details = sorted(verdict.details.items(), key=lambda item: _is_long(item[1]))
    return rows + [(str(name), _value(value)) for name, value in details]


def _said(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _failed_checks(details: dict[str, Any]) -> str:
    failed = details.get("failed")
    if isinstance(failed, list) and failed:
        return "failed: " + "; ".join(map(str, failed))
    return ""


def _not_passed(details: dict[str, Any]) -> str:
    """The first tests of a pytest run that did not pass: ``not passed: t::a (failed), t::b (error)``."""
    tests = details.get("not_passed")
    if not isinstance(tests, list) or not tests:
        return ""
    more = f" and {len(tests) - 2} more" if len(tests) > 2 else ""
    return "not passed: " + ", ".join(map(str, tests[:2])) + more


def _seen(details: dict[str, Any]) -> str:
    """What the check saw and where: ``in out.txt: '25\\n'`` (the criterion bounded and escaped it)."""
    seen = details.get("seen")
    if not isinstance(seen, str):
        return ""
    where = details.get("seen_in")
    return f"in {where}: {seen}" if isinstance(where, str) and where else f"saw {seen}"


def _labels(verdict: CriterionResult) -> str:
    if verdict.expected_label is None and verdict.observed_label is None:
        return ""
    said = f"observed {verdict.observed_label!r}, expected {verdict.expected_label!r}"
    return f"{said}, read {_seen(verdict.details)}" if verdict.details.get("seen") else said


def _exit(details: dict[str, Any]) -> str:
    """A command's exit code with the test counts, else with its last line of output."""
    exit_code = details.get("exit_code")
    counts = details.get("counts")
    if isinstance(counts, dict) and counts:
        shown = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
        return f"exit {exit_code}: {shown}" if exit_code not in (None, 0) else shown
    if exit_code in (None, 0):
        return ""
    output = details.get("output")
    lines = [line.strip() for line in output.splitlines() if line.strip()] if isinstance(output, str) else []
    return f"exit {exit_code}: {lines[-1]}" if lines else f"exit {exit_code}"


def _compact(details: dict[str, Any]) -> str:
    shown = [f"{name} {_value(value)}" for name, value in list(details.items())[:4] if not _is_long(value)]
    return f" ({', '.join(shown)})" if shown else ""


def _is_long(value: Any) -> bool:
    """A text of several lines (shown last, after the short facts)."""
    return isinstance(value, str) and "\n" in value.strip()


def _value(value: Any) -> str:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        shown = value[:LIST_ITEMS] + (
            [f"… ({len(value) - LIST_ITEMS} more)"] if len(value) > LIST_ITEMS else []
        )
        return "\n".join(shown)
    if isinstance(value, str):
        lines = value.rstrip("\n").splitlines() or [""]
        if len(lines) <= EVIDENCE_LINES:
            return "\n".join(lines)
        return "\n".join([f"… ({len(lines) - EVIDENCE_LINES} lines before)", *lines[-EVIDENCE_LINES:]])
    if isinstance(value, bool | int | float) or value is None:
        return json.dumps(value)
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _clip(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"
