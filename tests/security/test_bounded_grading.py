"""Attacks that turn the agent's failure into a stalled run or an ``invalid`` episode through what the
graders read: text that makes the author's regex backtrack for ever, JSON that Python's parser
refuses or reads as infinity. Each must end as that criterion's failure, graded, in bounded time."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coder_eval import patterns
from coder_eval.patterns import MATCH_SECONDS

from .conftest import EVERY, Attack

pytestmark = pytest.mark.parametrize("driver", EVERY)

REPORT = """
task_id: report
initial_prompt: Write report.txt (a line of a's) and summary.json (its total).
sandbox: {{driver: {driver}}}
success_criteria:
  - {{id: report, type: file_matches_regex, path: report.txt, pattern: '^(a|aa)+$'}}
  - {{id: said, type: run_command, command: cat report.txt, stdout_regex: '^(a|aa)+$'}}
  - {{id: summary, type: json_check, path: summary.json, assertions: [{{expression: total, equals: 3}}]}}
  - {{id: reward, type: run_command, command: cat reward.txt, score_from_stdout: true}}
"""

HONEST = """
echo aaa > report.txt
echo '{"total": 3}' > summary.json
echo 1 > reward.txt
"""


def test_honest_output_passes(attack: Attack, driver: str) -> None:
    outcome = attack(HONEST, driver, REPORT)

    assert outcome.end.outcome == "pass", outcome.summary()


@pytest.mark.timeout(30 * MATCH_SECONDS)
def test_text_that_makes_the_authors_regex_backtrack_for_ever(
    attack: Attack, driver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of the two criteria whose pattern backtracks spends its whole bound: a bound of 1 s
    instead of ``MATCH_SECONDS`` keeps the test short (the bound is read when a criterion is graded,
    and its error names it)."""
    monkeypatch.setattr(patterns, "MATCH_SECONDS", 1.0)
    script = HONEST + 'python3 -c \'print("a" * 64 + "b")\' > report.txt\n'
    outcome = attack(script, driver, REPORT)

    assert outcome.end.outcome == "fail", outcome.summary()
    for criterion in ("report", "said"):
        assert not outcome.verdicts[criterion].passed and outcome.verdicts[criterion].error is None
        assert "took longer than 1 s" in outcome.verdicts[criterion].details["error"]
    assert outcome.verdicts["summary"].passed  # the other criteria were graded as usual


def test_json_past_the_parsers_limits(attack: Attack, driver: str) -> None:
    script = (
        HONEST
        + """
    python3 -c 'print("{\\"total\\": 1" + "0" * 5000 + "}")' > summary.json
    echo 1e999 > reward.txt
    """
    )
    outcome = attack(script, driver, REPORT)

    assert outcome.end.outcome == "fail", outcome.summary()
    for criterion in ("summary", "reward"):
        assert not outcome.verdicts[criterion].passed and outcome.verdicts[criterion].error is None
    assert "cannot be read as JSON" in outcome.verdicts["summary"].details["error"]
    assert "not a finite number" in outcome.verdicts["reward"].details["error"]


STALLING = """
task_id: stalling
initial_prompt: Write report.txt.
agent: {{kind: command, command: "python3 -c 'print(\\"a\\" * 64 + \\"b\\")' > report.txt"}}
sandbox: {{driver: {driver}}}
success_criteria:
""" + "".join(
    f"  - {{{{id: r{i}, type: file_matches_regex, path: report.txt, pattern: '^(a|aa)+$'}}}}\n"
    for i in range(4)
)


def test_sigterm_is_honoured_while_the_graders_match(tmp_path: Path, driver: str) -> None:
    """Four patterns that each backtrack for ever: SIGTERM in the middle stops the run at once."""
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "stalling.yaml").write_text(STALLING.format(driver=driver), encoding="utf-8")
    run = tmp_path / "run"
    args = [sys.executable, "-m", "coder_eval", "run", "tasks", "--run-dir", str(run), "--no-report"]
    process = subprocess.Popen(
        args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while not any(b'"name":"verify"' in p.read_bytes() for p in run.glob("episodes/*.jsonl")):
            assert time.monotonic() < deadline and process.poll() is None, "grading never began"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=4 * MATCH_SECONDS)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
