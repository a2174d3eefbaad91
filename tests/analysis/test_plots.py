import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes

from coder_eval.analysis import classification, compare, comparisons_frame, summarize
from coder_eval.analysis.plots import (
    confusion_plot,
    cost_vs_pass_plot,
    distribution_plot,
    flips_heatmap,
    forest_plot,
    pass_rate_plot,
)

from .builders import episodes_frame

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
