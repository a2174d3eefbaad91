"""The notebook helpers: readable tables, the comparison and flips tables, links, the token plot."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import coder_eval.analysis as ca
from coder_eval.analysis.answer.wording import verdict_rows
from coder_eval.analysis.views.notebook import (
    TRANSCRIPT_URL_ENV,
    BudgetStop,
    budget_stops,
    flips_table,
    load_report_runs,
    metric_value,
    readable,
    token_buckets_plot,
    trajectory_links,
)
from coder_eval.manifest import BudgetRecord
from coder_eval.run_dir import RunDir
from tests.analysis.builders import write_suite
from tests.helpers import REPO

RUNS = REPO / "tests" / "fixtures" / "runs"
FAST = 199

pytestmark = pytest.mark.filterwarnings("ignore:1 trajectories are incomplete")


def test_readable_gives_reasons_instead_of_nan() -> None:
    frame = pd.DataFrame(
        {
            "variant_id": ["a", "b", "c"],
            "n_tasks": [0, 1, 5],
            "mean": [math.nan, 0.5, 0.25],
            "ci_low": [math.nan, math.nan, 0.125],
            "ci_high": [math.nan, math.nan, math.inf],
            "method": ["no valid episodes", "t over task means", "t over task means"],
        }
    )
    shown = readable(frame)
    assert shown["mean"].tolist() == ["n/a (no valid episodes)", "0.5", "0.25"]
    assert shown["ci_low"].tolist() == ["n/a (no valid episodes)", "n/a (one task)", "0.125"]
    assert shown["ci_high"].tolist()[2] == "∞"
    assert readable(frame, why={"mean": "nothing ran"})["ci_low"][0] == "n/a (nothing ran)"


def test_metric_values_read_as_people_write_them() -> None:
    assert metric_value("passed", 2 / 3) == "66.7%"
    assert metric_value("passed", 1 / 3, signed=True) == "+33.3 pts"
    assert metric_value("cost_usd", 0.012345) == "0.0123"
    assert metric_value("num_turns", -1.25, signed=True) == "-1.25"
    assert metric_value("passed", math.nan) == "n/a"


def test_the_comparison_and_flips_tables_name_baseline_and_candidate_alike() -> None:
    episodes = ca.load_runs(RUNS / "three-way").episodes
    rows = [
        ca.compare(episodes, "with_hint", "baseline", m, n_resamples=FAST) for m in ("passed", "cost_usd")
    ]
    table = verdict_rows(rows)
    assert list(table.columns[:4]) == [
        "metric",
        "baseline baseline",
        "candidate with_hint",
        "effect [verdict's interval]",
    ]
    assert table["baseline baseline"][0] == metric_value("passed", rows[0].mean_b)
    assert table["candidate with_hint"][0] == metric_value("passed", rows[0].mean_a)
    low, high = (
        metric_value("passed", x, signed=True) for x in (rows[0].verdict_ci_low, rows[0].verdict_ci_high)
    )
    assert (
        table["effect [verdict's interval]"][0]
        == f"{metric_value('passed', rows[0].diff, True)} [{low}, {high}]"
    )
    assert table["effect [verdict's interval]"][1].startswith(f"×{rows[1].ratio:.3g} [×")  # cost: the ratio
    flipped = flips_table(ca.flips(episodes, "baseline", "with_hint"), "baseline", "with_hint")
    assert {"baseline baseline", "candidate with_hint", "baseline → candidate"} <= set(flipped.columns)
    assert set(flipped["baseline → candidate"]) <= {"pass→fail", "fail→pass"}


def test_links_go_to_the_transcript_page_when_a_viewer_serves_the_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = str(RUNS / "three-way" / "episodes" / "csv-report--baseline--r0.jsonl")
    monkeypatch.delenv(TRANSCRIPT_URL_ENV, raising=False)
    assert 'href="csv-report--baseline--r0.jsonl"' in trajectory_links(
        [path], base=RUNS / "three-way" / "episodes"
    )
    monkeypatch.setenv(TRANSCRIPT_URL_ENV, "/coder-eval/transcript")
    link = trajectory_links([path])
    assert 'href="/coder-eval/transcript?path=%2F' in link and 'target="_blank"' in link


def test_the_token_bucket_legend_covers_no_bar() -> None:
    episodes = ca.load_runs(RUNS / "three-way").episodes
    figure = Figure(figsize=(7.5, 3.5), layout="constrained")
    FigureCanvasAgg(figure)
    ax = token_buckets_plot(episodes, figure.subplots())
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [patch.get_window_extent(renderer) for patch in ax.patches]
    assert bars and not any(legend.overlaps(bar) for bar in bars)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "input",
        "output",
        "cache read",
        "cache creation",
    ]


def test_a_run_its_cost_cap_stopped_is_reported_as_partial(tmp_path: Path) -> None:
    stopped = write_suite(tmp_path / "a", {"v": {"t1": ["pass"], "t2": ["fail"]}})
    run = RunDir(stopped)
    manifest = run.read_manifest()
    manifest.status = "budget_stopped"
    manifest.budget = BudgetRecord(max_cost_usd=1.5, spent_usd=2.0, stopped=True, not_started=3)
    run.write_manifest(manifest)
    finished = write_suite(tmp_path / "b", {"v": {"t1": ["pass"]}}, run_id="run2")

    runs, notes = load_report_runs(f"{stopped}, {finished}")

    assert budget_stops([stopped, finished, tmp_path / "nowhere"]) == [BudgetStop("run1", 1.5, 2.0, 3)]
    assert notes == [
        "run run1 was stopped by its cost cap ($2 spent of $1.5; 3 episodes not started): every figure "
        "covers the episodes that ran, and `coder-eval run --resume` with a larger --max-cost-usd finishes it"
    ]
    assert len(runs.episodes) == 3


def test_the_record_note_says_how_many_episodes_are_the_agents_own_account() -> None:
    from coder_eval.analysis.views.notebook import record_note

    frame = pd.DataFrame({"record_verified": [True, False, None]}, dtype="boolean")
    assert record_note(frame) is not None and "1 of 3 episodes" in (record_note(frame) or "")
    assert record_note(pd.DataFrame({"record_verified": [True, None]}, dtype="boolean")) is None
    assert record_note(pd.DataFrame({"outcome": ["pass"]})) is None  # older frames
