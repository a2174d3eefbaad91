"""The betting confidence sequence: its capital against closed forms, its coverage at every look
by simulation, its decisions, and the bounded transform for amounts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from coder_eval.analysis.stats.sequential import (
    BET_FRACTIONS,
    MEANS,
    capped_log_ratio,
    confidence_sequence,
    decide,
    decisions,
    first_decision,
    log_capital,
    ratio_of,
)
from coder_eval.errors import AnalysisError

BETS = np.concatenate([BET_FRACTIONS, -BET_FRACTIONS])


def test_the_capital_after_two_looks_is_the_closed_form() -> None:
    x = np.array([0.5, -0.25])
    m = np.array([0.0, 0.3])
    lam = BETS[None, :] / (1 + np.abs(m))[:, None]
    expected = np.mean((1 + lam * (x[0] - m[:, None])) * (1 + lam * (x[1] - m[:, None])), axis=1)

    got = np.exp(log_capital(x, m))

    assert got[0] == pytest.approx([1.0, 1.0])  # +λ and -λ break even after one look
    assert got[1] == pytest.approx(expected)
    assert got[1, 0] == pytest.approx(1 + np.mean(BETS**2) * x[0] * x[1])


def test_a_capital_past_the_floats_range_is_the_log_mean_of_its_bets() -> None:
    """After 3,000 looks the capital is far past what a float holds (e^1000 and more); its log is
    still scipy's log-sum-exp of the bets' log paths, less log(bets)."""
    x = np.random.default_rng(7).choice([-1.0, 0.0, 0.5, 1.0], size=3000, p=[0.1, 0.2, 0.2, 0.5])
    m = np.array([-0.9, 0.0, 0.2, 0.95])
    lam = BETS[None, :] / (1 + np.abs(m))[:, None]
    paths = np.cumsum(np.log1p(lam[None] * (x[:, None, None] - m[None, :, None])), axis=0)

    got = log_capital(x, m)

    assert got.max() > 1000  # e^1000: no float holds it
    assert got == pytest.approx(logsumexp(paths, axis=2) - np.log(len(BETS)), rel=1e-12, abs=1e-12)


def test_zero_is_rejected_exactly_when_the_all_wins_capital_reaches_1_over_alpha() -> None:
    n = np.arange(1, 30)
    capital = np.array([np.mean((1 + BETS) ** k) for k in n])  # x = 1 every time, at m = 0
    first = int(n[np.argmax(capital >= 20)])

    seq = confidence_sequence(np.ones(29))

    assert np.flatnonzero(seq.zero_rejected)[0] + 1 == first
    assert seq.log_e0 == pytest.approx(np.log(capital))


def test_the_interval_only_narrows_and_holds_the_sample_mean() -> None:
    x = np.random.default_rng(3).choice([-1.0, 0.0, 1.0], 60, p=[0.2, 0.3, 0.5])

    seq = confidence_sequence(x)

    assert np.all(np.diff(seq.low) >= 0) and np.all(np.diff(seq.high) <= 0)
    means = np.cumsum(x) / np.arange(1, 61)
    assert np.all((seq.low <= means) & (means <= seq.high))
    assert seq.low[0] == -1.0 and seq.high[0] == 1.0


@pytest.mark.parametrize("truth", [0.0, 0.3, -0.5])
def test_the_truth_is_covered_at_every_look_at_least_1_minus_alpha(truth: float) -> None:
    """Paths of three-repeat paired differences with mean ``truth``: the share of paths whose
    interval ever leaves the truth (over 40 looks) stays under alpha (with Monte Carlo slack)."""
    rng = np.random.default_rng(int(truth * 10) + 7)
    p_b = rng.uniform(0.1, 0.9, (250, 40))
    p_a = np.clip(p_b + truth, 0, 1)
    x = (rng.binomial(3, p_a) - rng.binomial(3, p_b)) / 3
    mean = (p_a - p_b).mean()

    missed = 0
    for path in x:
        seq = confidence_sequence(path)
        missed += bool(np.any((seq.low > mean + 0.01) | (seq.high < mean - 0.01)))

    assert missed / len(x) <= 0.05 + 0.03


def test_effects_that_average_to_zero_are_not_called() -> None:
    rng = np.random.default_rng(11)
    shift = rng.choice([-0.4, 0.4], (250, 40))  # real per-task effects, none on average
    p_b = np.full((250, 40), 0.5)
    x = (rng.binomial(3, p_b + shift / 2) - rng.binomial(3, p_b - shift / 2)) / 3

    called = sum(bool(confidence_sequence(path).zero_rejected[-1]) for path in x)

    assert called / len(x) <= 0.05 + 0.03


def test_a_clear_effect_is_decided_better_and_a_null_ends_no_effect() -> None:
    rng = np.random.default_rng(5)
    better = decisions(confidence_sequence(rng.choice([0.0, 1.0], 80, p=[0.4, 0.6])), 0.2)
    null = decisions(confidence_sequence(rng.choice([-1 / 3, 0.0, 1 / 3], 80)), 0.2)

    assert better[-1] == "better" and better[0] is None
    assert null[-1] == "no_effect"
    assert decisions(confidence_sequence(-rng.choice([0.0, 1.0], 80, p=[0.4, 0.6])), 0.2)[-1] == "worse"


def test_e_bonferroni_shares_alpha_across_metrics() -> None:
    x = np.full(40, 0.3)

    one, two = confidence_sequence(x), confidence_sequence(x, tests=2)

    assert two.level == pytest.approx(0.025)
    assert np.all(two.low <= one.low) and np.all(two.high >= one.high)
    assert np.argmax(two.zero_rejected) > np.argmax(one.zero_rejected)


def test_the_first_decision_block_by_block_is_that_of_the_whole_sequence() -> None:
    """Blocks carry the paths and the rejected means over exactly: the same look, the same word."""
    rng = np.random.default_rng(7)
    found: set[str | None] = set()
    for trial in range(600):
        looks = int(rng.integers(1, 90))
        x = np.clip(rng.normal(rng.uniform(-0.6, 0.6), 0.6, looks), -1.0, 1.0)
        x = np.round(x * 4) / 4 if trial % 2 else x  # pass-rate-like steps, and continuous values
        delta, tests, block = [0.0, 0.1, 0.3][trial % 3], 1 + trial % 2, int(rng.integers(1, 12))
        steps = decisions(confidence_sequence(x, tests=tests), delta)
        whole = next(((t, d) for t, d in enumerate(steps) if d is not None), None)
        assert first_decision(x, delta, tests=tests, block=block) == whole, (trial, block)
        found.add(None if whole is None else whole[1])
    assert found == {None, "better", "worse", "no_effect"}  # every outcome was compared


def test_the_first_decision_refuses_what_the_sequence_refuses() -> None:
    with pytest.raises(AnalysisError, match=r"finite observations in \[-1, 1\]"):
        first_decision(np.array([0.5, 2.0]), delta=0.1)
    with pytest.raises(AnalysisError, match="finite observations"):  # after the look that decides
        first_decision(np.array([*np.ones(30), np.nan]), delta=0.1)
    with pytest.raises(AnalysisError, match="alpha must be in"):
        first_decision(np.array([0.5]), delta=0.1, alpha=1.5)
    assert first_decision(np.array([]), delta=0.1) is None  # no look, no decision


def test_decide_words_each_case() -> None:
    assert decide(0.05, 0.4, True, 0.2) == "better"
    assert decide(-0.4, -0.05, True, 0.2) == "worse"
    assert decide(-0.1, 0.15, False, 0.2) == "no_effect"
    assert decide(-0.1, 0.3, False, 0.2) is None
    assert decide(-0.1, 0.15, False, 0.0) is None


def test_amounts_bet_on_the_log_ratio_capped_at_the_cap() -> None:
    got = capped_log_ratio(np.array([1.0, 3.0, 5.0, 0.0, 0.0, 2.0]), np.array([2.0, 3.0, 1.0, 0.0, 1.0, 0.0]))

    assert got.tolist() == pytest.approx([np.log(2) / np.log(4), 0.0, -1.0, 0.0, 1.0, -1.0])
    assert ratio_of(float(got[0])) == pytest.approx(0.5)  # the candidate's ratio: half the cost


@pytest.mark.parametrize("bad", [[1.5], [np.nan], [[0.1]]])
def test_observations_outside_minus_one_one_are_refused(bad: list[float]) -> None:
    with pytest.raises(AnalysisError, match=r"\[-1, 1\]"):
        confidence_sequence(np.array(bad))


def test_bad_alpha_and_negative_amounts_are_refused() -> None:
    with pytest.raises(AnalysisError, match="alpha"):
        confidence_sequence(np.zeros(3), alpha=1.5)
    with pytest.raises(AnalysisError, match="negative"):
        capped_log_ratio(np.array([-1.0]), np.array([1.0]))
    with pytest.raises(AnalysisError, match="cap"):
        capped_log_ratio(np.array([1.0]), np.array([1.0]), cap=1.0)


def test_zero_is_on_the_grid() -> None:
    assert 0.0 in MEANS
