import krippendorff
import numpy as np
import pandas as pd
import pytest

from coder_eval.analysis import evaluation_cost, judge_agreement, judge_votes
from coder_eval.errors import AnalysisError

VOTES = [[True, True, True], [True, False, True], [False, False, False], [True, True, False]]


def criteria(votes: list[list[bool]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "episode_id": f"t{i}--v--r0",
                "criterion_id": "judge",
                "variant_id": "v",
                "passed": sum(vs) * 2 > len(vs),
                "details": {
                    "votes": [
                        {
                            "passed": p,
                            "score": float(p),
                            "rationale": "",
                            "input_tokens": 100,
                            "output_tokens": 10,
                            "cost_usd": 0.01,
                        }
                        for p in vs
                    ]
                },
            }
            for i, vs in enumerate(votes)
        ]
    )


def test_agreement_matches_krippendorff_on_the_votes() -> None:
    row = judge_agreement(criteria(VOTES)).iloc[0]
    expected = krippendorff.alpha(
        reliability_data=np.array(VOTES, dtype=float).T, level_of_measurement="nominal"
    )
    assert (row["n_items"], row["n_votes"], row["share_unanimous"]) == (4, 3, 0.5)
    assert row["alpha"] == pytest.approx(expected)


def test_identical_votes_leave_alpha_undefined() -> None:
    row = judge_agreement(criteria([[True, True], [True, True]])).iloc[0]
    assert np.isnan(row["alpha"]) and "identical" in row["note"]


def test_evaluation_cost_sums_the_votes() -> None:
    row = evaluation_cost(criteria(VOTES)).iloc[0]
    assert (row["n_votes"], row["input_tokens"], row["cost_usd"]) == (12, 1200, pytest.approx(0.12))


def test_no_votes_is_an_analysis_error() -> None:
    with pytest.raises(AnalysisError, match="votes"):
        judge_agreement(pd.DataFrame({"criterion_id": ["x"], "details": [{}]}))


def test_judge_votes_lists_every_vote_beside_the_panel_verdict() -> None:
    votes = judge_votes(criteria(VOTES))
    assert len(votes) == 12
    second = votes[votes["episode_id"] == "t1--v--r0"]
    assert second["vote"].tolist() == [1, 2, 3]
    assert second["passed"].tolist() == [True, False, True] and second["panel_passed"].all()
    assert votes["cost_usd"].sum() == pytest.approx(0.12)
