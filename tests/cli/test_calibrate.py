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


def labelled_run(folder: Path, judge_passes: bool = True) -> list[str]:
    """A run of N episodes whose judge passes each (or fails each); the header and rows of CSV
    labels agreeing with it."""
    write_run(folder / "runs", "r", {(f"t{i}", "v", 0): "pass" for i in range(N)},
              judge={f"t{i}--v--r0": judge_passes for i in range(N)})  # fmt: skip
    verdict = "pass" if judge_passes else "fail"
    return ["episode_id,criterion_id,verdict,rater"] + [f"t{i}--v--r0,judge,{verdict},ana" for i in range(N)]


def test_labels_as_a_spreadsheet_writes_them_are_read(tmp_path: Path) -> None:
    rows = labelled_run(tmp_path)
    rows[5] = rows[5].replace(",pass,", ",fail,")  # one disagreement: kappa is defined
    (tmp_path / "labels.CSV").write_bytes(("\ufeff" + "\r\n".join(rows) + "\r\n").encode())
    done = coder_eval("calibrate", "runs/r", "--labels", "labels.CSV", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "  judge: " in done.stdout and "1 labels name no graded" not in done.stderr


def test_a_row_with_an_extra_field_is_named(tmp_path: Path) -> None:
    rows = labelled_run(tmp_path)
    rows[3] += ",oops"
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    done = coder_eval("calibrate", "runs/r", "--labels", "labels.csv", cwd=tmp_path)
    assert done.returncode == 2
    assert "labels.csv:4: 4 columns in the header, 5 fields in this row" in done.stderr, done.stderr
    assert "Keys should be strings" not in done.stderr and "Traceback" not in done.stderr


def test_labels_that_match_nothing_are_a_usage_error(tmp_path: Path) -> None:
    labelled_run(tmp_path)
    (tmp_path / "labels.jsonl").write_text(
        '{"episode_id": "zz--v--r0", "criterion_id": "judge", "verdict": "pass"}\n'
    )
    done = coder_eval("calibrate", "runs/r", "--labels", "labels.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("error: labels.jsonl: no label names a graded")
    assert "episode 'zz--v--r0', criterion 'judge'; the runs graded criteria judge, tests" in done.stderr


def test_an_undefined_kappa_is_said_undefined_and_why(tmp_path: Path) -> None:
    rows = labelled_run(tmp_path, judge_passes=False)
    (tmp_path / "labels.csv").write_text("\n".join(rows) + "\n")
    done = coder_eval("calibrate", "runs/r", "--labels", "labels.csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "nan" not in done.stdout and "│ undefined (one verdict) " in done.stdout
    said = " ".join(done.stdout.split("\n"))
    assert (
        f"kappa undefined: the judge and the people gave all {N} episodes a fail, so agreement by "
        "chance is 1 (label episodes of both verdicts)" in said
    ), done.stdout


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
