import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from coder_eval.analysis import compare, compare_all, compare_metrics, comparisons_frame, higher_is_better
from coder_eval.analysis.answer.wording import comparison_line
from coder_eval.analysis.stats.inversion import sign_flip_family
from coder_eval.analysis.stats.multiplicity import holm_levels
from coder_eval.analysis.stats.signflip import sign_flip
from coder_eval.errors import AnalysisError
from tests.analysis.builders import binary_frame, episodes_frame


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1] * 8 + [0] * 4, [0] * 8 + [0] * 4),
        ([1, 0, 1, 0, 1], [0, 1, 1, 0, 0]),
        ([1, 1, 0, 1], [0, 0, 0, 1]),
    ],
)
def test_one_run_per_task_uses_exact_mcnemar_and_its_inverted_interval(a: list[int], b: list[int]) -> None:
    c = compare(binary_frame(a, b), "a", "b")
    a_only = sum(x > y for x, y in zip(a, b, strict=True))
    b_only = sum(x < y for x, y in zip(a, b, strict=True))
    assert (c.a_only, c.b_only, c.test) == (a_only, b_only, "exact McNemar")
    assert c.p_value == pytest.approx(stats.binomtest(a_only, a_only + b_only).pvalue)
    d = np.array(a, dtype=float) - np.array(b)
    expected = np.clip(sign_flip_family(d).interval(0.05), -1, 1)
    assert (c.ci_low, c.ci_high) == pytest.approx(expected) == (c.verdict_ci_low, c.verdict_ci_high)
    label = "inverted sign-flip test (exact)" + ("; approximate below 20 tasks" if len(a) < 20 else "")
    assert c.method == c.verdict_method == label
    assert (c.verdict != "inconclusive") == (not c.ci_low <= 0 <= c.ci_high)


def test_difference_interval_of_pass_rates_stays_within_minus_one_and_one() -> None:
    """Five tasks: the test can never reject, so its interval is unbounded, clipped to [−1, 1]."""
    c = compare(binary_frame([1, 1, 1, 1, 0], [0, 0, 0, 0, 0]), "a", "b")
    assert (c.ci_low, c.ci_high) == (-1.0, 1.0) and c.verdict == "inconclusive"


@pytest.mark.parametrize(
    ("a", "b", "repeats"),
    [("pass", "pass", 1), ("pass", "pass", 3), ("fail", "fail", 2), ("pass", "fail", 1), ("pass", "fail", 3)],
)
def test_no_spread_in_the_differences_still_gives_an_interval_and_an_mde(
    a: str, b: str, repeats: int
) -> None:
    """All pass in both arms, or every task flipped: the inverted test accepts one value only, so the
    arms' intervals widen it, never across 0 when the test excludes 0."""
    df = episodes_frame(
        {"a": {f"t{i}": [a] * repeats for i in range(10)}, "b": {f"t{i}": [b] * repeats for i in range(10)}}
    )
    c = compare(df, "a", "b")
    assert c.ci_high - c.ci_low > 0.05 and c.ci_low <= c.diff <= c.ci_high
    assert "joined with the MOVER" in c.method and 0 < c.mde < 1
    assert (c.verdict != "inconclusive") == (not c.ci_low <= 0 <= c.ci_high) == (a != b)


def test_one_differing_task_with_repeats_gives_p_one() -> None:
    frame = episodes_frame(
        {"a": {"t0": ["pass", "pass"], "t1": ["fail"] * 2}, "b": {"t0": ["fail", "pass"], "t1": ["fail"] * 2}}
    )
    c = compare(frame, "a", "b")
    assert (c.p_value, c.verdict) == (1.0, "inconclusive")


def test_fewer_than_six_discordant_pairs_is_never_significant() -> None:
    c = compare(binary_frame([1] * 5 + [0] * 10, [0] * 15), "a", "b")
    assert c.p_value > 0.05 and c.verdict == "inconclusive"


def test_all_differences_zero_is_inconclusive_with_p_one() -> None:
    c = compare(binary_frame([1, 0, 1, 1], [1, 0, 1, 1]), "a", "b")
    assert (c.diff, c.p_value, c.verdict) == (0.0, 1.0, "inconclusive")


def repeats_frame(rng: np.random.Generator, n_tasks: int, p_a: float = 0.7, p_b: float = 0.4) -> pd.DataFrame:
    outcomes = {
        v: {f"t{i}": ["pass" if rng.random() < p else "fail" for _ in range(3)] for i in range(n_tasks)}
        for v, p in (("a", p_a), ("b", p_b))
    }
    return episodes_frame(outcomes)


def differences(df: pd.DataFrame) -> np.ndarray:
    means = df.assign(p=df["passed"].astype(float)).pivot_table(
        index="task_id", columns="variant_id", values="p"
    )
    return (means["a"] - means["b"]).to_numpy()


@pytest.mark.parametrize(("n_tasks", "seed"), [(8, 0), (12, 1), (30, 2), (120, 3)])
def test_repeats_use_the_exact_sign_flip_test_at_any_size(n_tasks: int, seed: int) -> None:
    df = repeats_frame(np.random.default_rng(seed), n_tasks)
    c = compare(df, "a", "b")
    d = differences(df)
    assert c.test == "sign-flip (exact)" and c.n_repeats == 3
    assert c.p_value == pytest.approx(sign_flip(d).p_value) and c.diff == pytest.approx(d.mean())
    if n_tasks <= 12:  # small enough to check against scipy's own enumeration
        nonzero = d[d != 0]
        expected = stats.permutation_test(
            (nonzero,), np.mean, permutation_type="samples", n_resamples=np.inf, vectorized=True
        ).pvalue
        assert c.p_value == pytest.approx(min(expected, 1.0))


def test_lower_is_better_metrics_call_the_cheaper_variant_better() -> None:
    df = episodes_frame({v: {f"t{i}": ["pass"] for i in range(30)} for v in ("a", "b")})
    rng = np.random.default_rng(3)
    base = rng.lognormal(size=30)
    df["cost_usd"] = np.concatenate([base * 0.5 * rng.lognormal(0, 0.1, 30), base])
    c = compare(df, "a", "b", metric="cost_usd")
    assert not higher_is_better("cost_usd") and c.verdict == "a_better" and c.diff < 0
    assert c.ratio == pytest.approx(0.5, rel=0.1) and c.test == "sign-flip on log ratios (exact)"
    assert c.method.endswith("approximate (heavy-tailed amounts)")  # a difference of heavy-tailed means


def test_tasks_in_one_variant_only_are_excluded_and_counted() -> None:
    df = episodes_frame(
        {"a": {"t1": ["pass"], "t2": ["pass"], "t3": ["pass"]}, "b": {"t1": ["fail"], "t2": ["invalid"]}}
    )
    c = compare(df, "a", "b")
    assert (c.n_tasks, c.n_excluded_tasks, c.n_invalid_excluded) == (1, 2, 1)


def test_variant_with_only_invalid_episodes_compares_no_tasks() -> None:
    df = episodes_frame({"a": {"t1": ["pass"], "t2": ["fail"]}, "b": {"t1": ["invalid"], "t2": ["invalid"]}})
    c = compare(df, "a", "b")
    assert c.n_tasks == 0 and np.isnan(c.p_value) and c.verdict == "inconclusive"


def test_unknown_variant_lists_valid_ones() -> None:
    with pytest.raises(AnalysisError, match=r"unknown variant 'bb' \(did you mean 'b'\?\); valid: a, b"):
        compare(binary_frame([1], [0]), "a", "bb")
    with pytest.raises(AnalysisError, match="two different"):
        compare(binary_frame([1], [0]), "a", "a")
    with pytest.raises(AnalysisError, match="method"):
        compare(binary_frame([1], [0]), "a", "b", method="bayes")  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(5))
def test_holm_equals_statsmodels_with_ties_and_nan(seed: int) -> None:
    from coder_eval.analysis.stats.multiplicity import holm

    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0, 0.2, 9), 2)  # ties
    p[seed % 9] = np.nan
    got = np.array(holm(list(p)))
    finite = ~np.isnan(p)
    assert np.isnan(got[~finite]).all()
    assert got[finite] == pytest.approx(multipletests(p[finite], method="holm")[1])


def test_compare_all_holm_adjusts_every_pair() -> None:
    rng = np.random.default_rng(4)
    outcomes = {
        v: {f"t{i}": ["pass" if rng.random() < p else "fail"] for i in range(40)}
        for v, p in (("x", 0.9), ("y", 0.5), ("z", 0.2))
    }
    table = compare_all(episodes_frame(outcomes))
    assert list(zip(table["a"], table["b"], strict=True)) == [("x", "y"), ("x", "z"), ("y", "z")]
    expected = multipletests(table["p_value"], method="holm")[1]
    assert table["p_adjusted"].to_numpy() == pytest.approx(expected)
    significant = (table["p_adjusted"] < 0.05) & ((table["ci_low"] > 0) | (table["ci_high"] < 0))
    assert ((table["verdict"] != "inconclusive") == significant).all()
    excludes = (table["verdict_ci_low"] > 0) | (table["verdict_ci_high"] < 0)
    assert ((table["verdict"] != "inconclusive") == excludes).all()


def test_compare_metrics_holm_adjusts_across_metrics_and_leaves_intervals_alone() -> None:
    df = repeats_frame(np.random.default_rng(5), 20)
    df["score"] = df["passed"].astype(float) * 0.8
    df["num_turns"] = np.random.default_rng(6).integers(1, 9, len(df)).astype(float)
    metrics = ["passed", "score", "num_turns"]
    table = compare_metrics(df, "a", "b", metrics)
    single = comparisons_frame([compare(df, "a", "b", m) for m in metrics])
    assert table["p_adjusted"].to_numpy() == pytest.approx(multipletests(single["p_value"], method="holm")[1])
    assert table[["ci_low", "ci_high"]].to_numpy() == pytest.approx(single[["ci_low", "ci_high"]].to_numpy())
    assert set(table["ci_adjustment"]) == {"unadjusted (95 % each)"}
    assert (table["p_adjusted"] >= table["p_value"]).all()


def test_holm_verdicts_keep_the_interval_and_the_verdict_in_step() -> None:
    """Each verdict's interval is at its Holm step's level: it excludes 0 exactly when the adjusted
    verdict is called, including a metric whose own p < 0.05 Holm does not call."""
    rng = np.random.default_rng(13)
    df = repeats_frame(rng, 14)
    df["score"] = df["passed"].astype(float) * rng.uniform(0.5, 1, len(df))
    df["num_turns"] = rng.integers(1, 9, len(df)).astype(float)
    table = compare_metrics(df, "a", "b", ["passed", "score", "num_turns"])
    score = table.set_index("metric").loc["score"]
    assert score["p_value"] < 0.05 <= score["p_adjusted"] and score["verdict"] == "inconclusive"
    assert score["verdict_ci_low"] <= 0 and (table["verdict_confidence"] == 1 - 0.05 / 3).all()
    excludes = (table["verdict_ci_low"] > np.where(table["basis"] == "ratio", 1, 0)) | (
        table["verdict_ci_high"] < np.where(table["basis"] == "ratio", 1, 0)
    )
    assert ((table["verdict"] != "inconclusive") == excludes).all()
    assert ((table["verdict"] != "inconclusive") == (table["p_adjusted"] < 0.05)).all()


def test_holm_levels_follow_the_step_down() -> None:
    assert holm_levels([0.01, 0.04, 0.03]) == pytest.approx([0.05 / 3, 0.025, 0.025])
    assert holm_levels([0.001, 0.02, 0.5]) == pytest.approx([0.05 / 3, 0.025, 0.05])
    assert np.isnan(holm_levels([0.01, float("nan")])[1])


def test_fixed_tasks_use_the_t_test_on_within_task_variance_and_its_interval() -> None:
    rng = np.random.default_rng(8)
    p = rng.beta(0.5, 0.5, 20)
    outcomes = {
        v: {f"t{i}": ["pass" if rng.random() < q else "fail" for _ in range(4)] for i, q in enumerate(p)}
        for v in "ab"
    }
    df = episodes_frame(outcomes)
    population, fixed = compare(df, "a", "b"), compare(df, "a", "b", estimand="fixed_tasks")
    assert fixed.estimand == "fixed_tasks" and fixed.test == "fixed tasks: t on within-task variance (120 df)"
    assert fixed.ci_high - fixed.ci_low < population.ci_high - population.ci_low
    se = (fixed.ci_high - fixed.diff) / stats.t.ppf(0.975, 120)
    assert fixed.p_value == pytest.approx(2 * stats.t.sf(abs(fixed.diff) / se, 120))


def test_comparisons_frame_has_one_row_per_comparison() -> None:
    df = binary_frame([1, 0, 1], [0, 0, 1])
    frame = comparisons_frame([compare(df, "a", "b"), compare(df, "b", "a")])
    assert len(frame) == 2 and {"diff", "verdict", "mde", "ratio", "basis", "min_tasks"} <= set(frame.columns)


def test_repeats_and_test_come_from_the_paired_tasks_only() -> None:
    """A task only one variant ran (with repeats) is excluded, and must not decide K or the test."""
    outcomes = {v: {f"t{i}": ["pass" if (i + (v == "b")) % 3 else "fail"] for i in range(10)} for v in "ab"}
    outcomes["a"]["extra"] = ["pass", "pass", "fail"]
    c = compare(episodes_frame(outcomes), "a", "b")
    assert (c.n_tasks, c.n_repeats, c.n_excluded_tasks, c.test) == (10, 1, 1, "exact McNemar")


def test_pass_rate_intervals_below_20_tasks_say_they_are_approximate() -> None:
    """At 8 tasks with pass rates near 0 and 1 the inverted interval held a real effect 88.5 % of the
    time (benchmarks/ci_coverage.py): its method says so; from 20 tasks on it does not."""
    few = compare(binary_frame([1] * 7 + [0], [1] * 5 + [0] * 3), "a", "b")
    many = compare(binary_frame([1] * 18 + [0] * 2, [1] * 15 + [0] * 5), "a", "b")
    assert few.verdict_method.endswith("; approximate below 20 tasks") and "approximate" in comparison_line(
        few
    )
    assert "approximate" not in many.verdict_method


def test_an_amount_equal_on_every_task_has_no_zero_width_interval() -> None:
    same = episodes_frame({v: {f"t{i}": ["pass"] for i in range(8)} for v in ("a", "b")}, num_turns=3.0)
    c = compare(same, "a", "b", "num_turns")
    assert c.p_value == 1.0 and c.verdict == "inconclusive" and np.isnan(c.ci_low) and np.isnan(c.ci_high)
    assert c.method == "undefined: every task mean is the same in both variants"
    shifted = episodes_frame({v: {f"t{i}": ["pass"] for i in range(8)} for v in ("a", "b")})
    shifted["num_turns"] = [float(i) + 1.0 for i in range(8)] + [float(i) for i in range(8)]
    c = compare(shifted, "a", "b", "num_turns")
    assert (
        c.ci_low == c.diff == 1.0 < c.ci_high and "MOVER" in c.method
    )  # cut at 1 on the side of 0, which p excludes
