"""Every public function gives the same answer on a plain ``pd.concat`` of frames (repeated index labels)."""

import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import coder_eval.analysis as ca
from coder_eval.analysis.frames.load import Runs
from tests.helpers import REPO

from .builders import episodes_frame

RUNS = [REPO / "tests" / "fixtures" / "runs" / name for name in ("skill-ab", "three-way")]


def load(*paths: Any) -> Runs:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one fixture trajectory is incomplete on purpose
        return ca.load_runs(*paths)


@pytest.fixture(scope="module")
def frames() -> tuple[Runs, Runs]:
    together = load(RUNS)
    parts = [load(p) for p in RUNS]
    concatenated = Runs(
        *(
            pd.concat([getattr(p, f) for p in parts])
            for f in ("episodes", "criteria", "tool_calls", "messages")
        )
    )
    assert concatenated.episodes.index.has_duplicates
    return together, concatenated


FAST = {"n_resamples": 199}
CALLS: dict[str, Callable[[Runs], Any]] = {
    "summarize": lambda r: ca.summarize(r.episodes, **FAST),
    "summarize cost": lambda r: ca.summarize(r.episodes, "cost_usd", **FAST),
    "cost_per_resolved": lambda r: ca.cost_per_resolved(r.episodes, **FAST),
    "compare": lambda r: ca.comparisons_frame(
        [ca.compare(r.episodes, "with_skill", "baseline", m) for m in ("passed", "cost_usd")]
    ),
    "compare mixed": lambda r: ca.comparisons_frame(
        [ca.compare(r.episodes, "with_skill", "baseline", method="mixed")]
    ),
    "compare_all": lambda r: ca.compare_all(r.episodes),
    "compare_metrics": lambda r: ca.compare_metrics(
        r.episodes, "with_skill", "baseline", ["passed", "num_turns"]
    ),
    "flips": lambda r: ca.flips(r.episodes, "baseline", "with_skill"),
    "pass_at_k_table": lambda r: ca.pass_at_k_table(r.episodes, ks=[1, 2]),
    "mde": lambda r: ca.mde(r.episodes, "with_skill", "baseline"),
    "power_at": lambda r: ca.power_at(r.episodes, "with_skill", "baseline", 0.2),
    "required_tasks": lambda r: ca.required_tasks(r.episodes, "with_skill", "baseline", 0.2),
    "variance_parts": lambda r: ca.variance_parts(r.episodes, "with_skill", "baseline"),
    "headline_tasks": lambda r: ca.headline_tasks(r.episodes, r.criteria).tasks,
    "classification": lambda r: ca.classification(r.criteria, "skill_triggered", **FAST).per_label,
    "judge_agreement": lambda r: ca.judge_agreement(r.criteria),
    "judge_votes": lambda r: ca.judge_votes(r.criteria).reset_index(drop=True),
    "evaluation_cost": lambda r: ca.evaluation_cost(r.criteria),
    "tool_usage": lambda r: ca.tool_usage(r.tool_calls),
    "frequent_calls": lambda r: ca.frequent_calls(r.tool_calls),
    "frequent_errors": lambda r: ca.frequent_errors(r.tool_calls),
}


@pytest.mark.parametrize("name", CALLS)
def test_concatenated_frames_give_the_same_answer(name: str, frames: tuple[Runs, Runs]) -> None:
    together, concatenated = frames
    expected, got = CALLS[name](together), CALLS[name](concatenated)
    if isinstance(expected, pd.DataFrame):  # rtol: the mixed model's optimiser is not bit-for-bit repeatable
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True), rtol=1e-4)
    else:
        assert got == expected


def test_missing_passed_is_read_from_the_outcome_by_summarize_and_compare() -> None:
    df = episodes_frame({v: {f"t{i}": ["pass", "fail", "pass"] for i in range(6)} for v in ("a", "b")})
    df.loc[[0, 4, 7], "passed"] = pd.NA
    reference = episodes_frame({v: {f"t{i}": ["pass", "fail", "pass"] for i in range(6)} for v in ("a", "b")})
    row, expected = ca.summarize(df).iloc[0], ca.summarize(reference).iloc[0]
    assert (row["n_episodes"], row["n_missing_excluded"], row["mean"]) == (18, 0, expected["mean"])
    c = ca.compare(df, "a", "b")
    assert (c.mean_a, c.n_repeats, c.n_missing_excluded) == (expected["mean"], 3, 0)
