"""Judges against people: a judge with planted disagreement is unfit to gate, a faithful one fit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from coder_eval.analysis import load_runs
from coder_eval.analysis.judging.calibration import calibrate, fitness, kappa, kappa_interval
from coder_eval.analysis.judging.labels import LABEL_COLUMNS
from coder_eval.errors import AnalysisError
from tests.store.histories import write_run

N = 40


def truth(i: int) -> bool:
    return i % 2 == 0


@pytest.fixture(scope="module")
def criteria(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    outcomes = {(f"t{i}", "v", 0): "pass" if truth(i) else "fail" for i in range(N)}
    judge = {f"t{i}--v--r0": truth(i) != (i % 5 in (0, 1)) for i in range(N)}  # 40 % flipped
    root = tmp_path_factory.mktemp("calibrate") / "runs"
    return load_runs(write_run(root, "r", outcomes, judge=judge)).criteria


def labels(rows: list[tuple[str, str, str, bool, float | None]]) -> pd.DataFrame:
    return pd.DataFrame([[None, *r[:2], r[2], r[3], r[4]] for r in rows], columns=LABEL_COLUMNS)


def people(criterion: str, rater: str = "ana", flip: frozenset[int] = frozenset()) -> list:
    return [(f"t{i}--v--r0", criterion, rater, truth(i) != (i in flip), None) for i in range(N)]


def test_the_judge_with_planted_disagreement_is_flagged_and_the_faithful_one_is_fit(
    criteria: pd.DataFrame,
) -> None:
    found = calibrate(criteria, labels(people("judge") + people("tests"))).table().set_index("criterion_id")
    tests, judge = found.loc["tests"], found.loc["judge"]
    assert tests["fit"] and tests["kappa"] == 1.0 and tests["n_items"] == N and tests["why"] == "fit to gate"
    assert not judge["fit"] and judge["agreement"] == 0.6
    assert judge["kappa_high"] < 0.6 and "kappa's lower bound" in judge["why"]
    assert judge["judge_pass_people_fail"] + judge["judge_fail_people_pass"] == 16


def test_kappa_matches_statsmodels_and_its_interval_holds_it() -> None:
    rng = np.random.default_rng(1)
    a = rng.random(50) < 0.5
    b = np.where(rng.random(50) < 0.8, a, ~a)
    table = [[(a & b).sum(), (a & ~b).sum()], [(~a & b).sum(), (~a & ~b).sum()]]
    assert float(kappa(a, b)) == pytest.approx(cohens_kappa(np.array(table)).kappa)


def test_several_raters_vote_ties_are_left_out_and_their_agreement_is_measured(
    criteria: pd.DataFrame,
) -> None:
    rows = people("tests") + people("tests", "bo", flip=frozenset({1, 2, 3, 4}))
    row = calibrate(criteria, labels(rows)).table().set_index("criterion_id").loc["tests"]
    assert row["ties"] == 4 and row["n_items"] == N - 4 and row["n_raters"] == 2
    assert 0.7 < row["raters_alpha"] < 0.9
    assert not row["fit"] or row["n_items"] >= 30


def test_score_bias_is_measured_where_people_gave_scores(criteria: pd.DataFrame) -> None:
    rows = [(e, c, r, v, 0.6 if v else 0.0) for e, c, r, v, _ in people("tests")]
    row = calibrate(criteria, labels(rows)).table().set_index("criterion_id").loc["tests"]
    assert row["bias"] == pytest.approx(0.2) and not row["fit"] and "score bias +0.20" in row["why"]


def test_labels_that_name_nothing_are_refused(criteria: pd.DataFrame) -> None:
    with pytest.raises(AnalysisError, match="no label names a graded criterion"):
        calibrate(criteria, labels([("nope--v--r0", "judge", "ana", True, None)]))
    found = calibrate(criteria, labels([*people("tests"), ("nope--v--r0", "judge", "ana", True, None)]))
    assert found.unmatched == 1


def test_a_labels_file_reads_jsonl_and_csv_and_names_a_bad_line(tmp_path: Path) -> None:
    from coder_eval.analysis.judging.labels import read_labels
    from coder_eval.errors import InputError

    first = '{"episode_id": "e", "criterion_id": "c", "verdict": "pass"}'
    second = '{"episode_id": "e", "criterion_id": "c", "score": 0.25, "rater": "bo"}'
    (tmp_path / "l.jsonl").write_text(f"{first}\n\n{second}\n")
    read = read_labels(tmp_path / "l.jsonl")
    assert read[["rater", "passed"]].values.tolist() == [["rater", True], ["bo", False]]
    assert pd.isna(read["score"][0]) and read["score"][1] == 0.25
    (tmp_path / "l.csv").write_text("episode_id,criterion_id,verdict,rater\ne,c,fail,ana\n")
    assert read_labels(tmp_path / "l.csv")["passed"].tolist() == [False]
    (tmp_path / "bad.csv").write_text("episode_id,criterion_id,verdict\ne,c,maybe\n")
    with pytest.raises(InputError, match=r"bad.csv:2: verdict: .*write pass or fail"):
        read_labels(tmp_path / "bad.csv")
    (tmp_path / "none.jsonl").write_text('{"episode_id": "e", "criterion_id": "c"}\n')
    with pytest.raises(InputError, match=r"none.jsonl:1: .*a verdict or a score"):
        read_labels(tmp_path / "none.jsonl")


@pytest.mark.slow
def test_the_kappa_interval_covers_with_few_episodes_of_one_verdict() -> None:
    """30 episodes, the people pass 10 % of them, a judge of true kappa 0.6: the interval must hold the
    true kappa in at least 93.5 % of labellings (a bootstrap over episodes held it in 77 %), and the
    rule must declare such a judge fit at most 2.5 % of the time (9.1 % before the floor on the rarer
    verdict). 1,500 labellings: the Monte Carlo standard error of a coverage of 95 % is 0.6 points."""
    rng = np.random.default_rng(30)
    covered = fit = 0
    for i in range(1500):
        people = rng.random(30) < 0.1
        error = (1 - (0.1**2 + 0.9**2)) * 0.4 / 2
        judge = np.where(people, rng.random(30) >= error / 0.1, rng.random(30) < error / 0.9)
        low, high = kappa_interval(judge, people, seed=i)
        covered += low <= 0.6 <= high
        fit += fitness(30, low, (np.nan,) * 3, int(min(people.sum(), (~people).sum())))[0]
    assert covered / 1500 >= 0.935 and fit / 1500 <= 0.025


def test_a_judge_with_too_few_episodes_of_one_verdict_is_not_fit() -> None:
    assert fitness(40, 0.9, (np.nan,) * 3, 4) == (False, "4 episodes of the people's rarer verdict (needs 5)")
    assert fitness(40, 0.9, (np.nan,) * 3, 5) == (True, "fit to gate")


def test_raters_who_all_say_the_same_have_no_alpha_and_it_says_why(criteria: pd.DataFrame) -> None:
    same = [(f"t{i}--v--r0", "tests", rater, True, None) for i in range(N) for rater in ("ana", "bo")]
    row = calibrate(criteria, labels(same)).judges[0]
    assert row.n_raters == 2 and np.isnan(row.raters_alpha)
    assert row.raters_note == "every label identical: alpha undefined"
