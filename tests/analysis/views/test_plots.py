import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes

from coder_eval.analysis import classification, compare, comparisons_frame, summarize
from coder_eval.analysis.views.plots import (
    confusion_plot,
    cost_vs_pass_plot,
    distribution_plot,
    flips_heatmap,
    forest_plot,
    pass_rate_plot,
)
from tests.analysis.builders import episodes_frame

FAST = {"n_resamples": 199}


@pytest.fixture
def episodes() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    outcomes = {
        v: {
            f"t{i}": [str(rng.choice(["pass", "fail", "invalid"], p=[p, 0.9 - p, 0.1])) for _ in range(2)]
            for i in range(12)
        }
        for v, p in (("a", 0.7), ("b", 0.4))
    }
    df = episodes_frame(outcomes)
    df["cost_usd"] = rng.lognormal(size=len(df))
    df["total_tokens"] = rng.integers(1000, 5000, size=len(df)).astype(float)
    return df


@pytest.fixture
def ax() -> Axes:
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def has_artists(ax: Axes) -> bool:
    return bool(ax.lines or ax.patches or ax.collections or ax.images)


def test_pass_rate_plot(episodes: pd.DataFrame, ax: Axes) -> None:
    assert has_artists(pass_rate_plot(summarize(episodes), ax))


def test_forest_plot(episodes: pd.DataFrame, ax: Axes) -> None:
    frame = comparisons_frame([compare(episodes, "a", "b", m, **FAST) for m in ("passed", "cost_usd")])
    out = forest_plot(frame, ax)
    assert out is ax and has_artists(ax) and len(ax.get_yticklabels()) == 2


def test_a_ratio_forest_plot_reads_in_plain_factors(episodes: pd.DataFrame, ax: Axes) -> None:
    """Amounts on a log axis: tick labels such as ×0.9 and ×1.25, never 10^0 or 6×10^-1."""
    frame = comparisons_frame([compare(episodes, "a", "b", "cost_usd", **FAST)])
    forest_plot(frame, ax)
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ax.get_xscale() == "log" and labels and all(label.startswith("×") for label in labels)
    assert not any("10^" in label or "$" in label for label in labels)


def test_an_unbounded_interval_is_drawn_to_the_edge(ax: Axes) -> None:
    """Five tasks: the test can exclude nothing, so the ratio interval is (0, ∞); it still draws."""
    df = episodes_frame({v: {f"t{i}": ["pass"] for i in range(5)} for v in ("a", "b")})
    df["cost_usd"] = [1.0, 2.0, 3.0, 4.0, 5.0, 1.1, 2.5, 2.0, 4.2, 5.5]
    frame = comparisons_frame([compare(df, "a", "b", "cost_usd", **FAST)])
    assert (frame["verdict_ci_low"][0], frame["verdict_ci_high"][0]) == (0.0, np.inf)
    forest_plot(frame, ax)
    low, high = ax.get_xlim()
    assert 0 < low < high < np.inf


def test_confusion_plot_draws_labels_with_dollars(ax: Axes) -> None:
    """An observed label is the agent's text: a pair of $ would start matplotlib's math mode."""
    criteria = pd.DataFrame(
        {
            "criterion_id": "c",
            "task_id": ["t1", "t2"],
            "variant_id": "v",
            "observed_label": ["$x_{$", "y"],
            "expected_label": ["y", "y"],
        }
    )
    confusion_plot(classification(criteria, **FAST), ax)
    ax.figure.canvas.draw()  # raised ValueError (mathtext) before labels were drawn as text
    assert "$x_{$" in [t.get_text().replace("\\$", "$") for t in ax.get_xticklabels()]


def test_distribution_plot(episodes: pd.DataFrame, ax: Axes) -> None:
    assert has_artists(distribution_plot(episodes, ax, metric="total_tokens"))


def test_cost_vs_pass_plot(episodes: pd.DataFrame, ax: Axes) -> None:
    assert has_artists(cost_vs_pass_plot(episodes, ax, **FAST))


def test_confusion_plot(ax: Axes) -> None:
    criteria = pd.DataFrame(
        {
            "criterion_id": "c",
            "task_id": ["t1", "t2", "t3"],
            "variant_id": "v",
            "observed_label": ["x", "y", None],
            "expected_label": ["x", "x", "y"],
        }
    )
    assert has_artists(confusion_plot(classification(criteria, **FAST), ax))


def test_flips_heatmap(episodes: pd.DataFrame, ax: Axes) -> None:
    assert has_artists(flips_heatmap(episodes, ax))
