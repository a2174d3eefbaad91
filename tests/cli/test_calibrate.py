"""``coder-eval calibrate``: the judge with planted disagreement is flagged unfit to gate on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import coder_eval
from tests.store.histories import write_run

N = 40


def test_calibrate_flags_the_judge_people_disagree_with(tmp_path: Path) -> None:
    truth = {f"t{i}--v--r0": i % 2 == 0 for i in range(N)}
    outcomes = {(f"t{i}", "v", 0): "pass" if i % 2 == 0 else "fail" for i in range(N)}
    judge = {e: v != (i % 5 in (0, 1)) for i, (e, v) in enumerate(truth.items())}
    write_run(tmp_path / "runs", "r", outcomes, judge=judge)
    lines = [{"episode_id": e, "criterion_id": c, "verdict": "pass" if v else "fail", "rater": "ana"}
             for e, v in truth.items() for c in ("judge", "tests")]  # fmt: skip
    (tmp_path / "labels.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    done = coder_eval("calibrate", "runs/r", "--labels", "labels.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "  judge: kappa's lower bound" in done.stdout
    assert "  tests: fit to gate" in done.stdout


def test_a_bad_labels_file_exits_2_naming_the_line(tmp_path: Path) -> None:
    write_run(tmp_path / "runs", "r", {("t", "v", 0): "pass"})
    (tmp_path / "labels.jsonl").write_text(
        '{"episode_id": "t--v--r0", "criterion_id": "tests", "verdict": "ok"}\n'
    )
    done = coder_eval("calibrate", "runs/r", "--labels", "labels.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "labels.jsonl:1: verdict" in done.stderr


def test_nothing_undefined_prints_as_a_bare_nan(tmp_path: Path) -> None:
    outcomes = {(f"t{i}", "v", 0): "pass" for i in range(6)}
    write_run(tmp_path / "runs", "r", outcomes)
    lines = [{"episode_id": f"t{i}--v--r0", "criterion_id": "tests", "verdict": "pass", "rater": rater}
             for i in range(6) for rater in ("ana", "bo")]  # fmt: skip
    (tmp_path / "labels.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    done = coder_eval("calibrate", "runs/r", "--labels", "labels.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "nan" not in done.stdout.lower().replace("n/a", "")
    assert "every label identical" in " ".join(done.stdout.split()) and "n/a" in done.stdout
