"""The Explorer's handlers, headless: set a widget's value, read the state the handler stored."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest

import coder_eval.analysis as ca
from coder_eval.analysis.answer.engine import REPORT_METRICS
from coder_eval.analysis.views import widgets
from coder_eval.analysis.views.widgets import ALL_METRICS, ALL_TAGS, Explorer, discover_runs, transcript_text
from coder_eval.errors import AnalysisError
from tests.helpers import REPO

RUNS = REPO / "tests" / "fixtures" / "runs"
FAST = 199  # resamples: the widget logic is under test here, not the intervals

pytestmark = pytest.mark.filterwarnings("ignore:1 trajectories are incomplete")


@pytest.fixture
def explorer() -> Explorer:
    return Explorer(RUNS, n_resamples=FAST)


def test_a_runs_folder_offers_every_run_and_selects_the_newest(explorer: Explorer) -> None:
    assert explorer.runs.options == (
        ("skill-ab — skill-ab", "skill-ab"),
        ("three-way — three-way", "three-way"),
    )
    assert explorer.runs.value == ("three-way",)
    assert (explorer.baseline.value, explorer.candidate.value) == ("baseline", "with_hint")
    assert explorer.comparison["metric"].tolist() == list(REPORT_METRICS)


def test_changing_the_candidate_recomputes_the_comparison(explorer: Explorer) -> None:
    explorer.candidate.value = "with_skill"
    episodes = ca.load_runs(RUNS / "three-way").episodes
    expected = ca.compare(episodes, "with_skill", "baseline", "passed", n_resamples=FAST)
    row = explorer.comparison.iloc[0]
    assert (row["a"], row["b"], row["diff"], row["verdict"]) == (
        "with_skill",
        "baseline",
        expected.diff,
        expected.verdict,
    )


def test_picking_runs_reloads_variants_tags_and_flips(explorer: Explorer) -> None:
    explorer.runs.value = ("skill-ab",)
    assert explorer.baseline.options == ("baseline", "with_skill")
    assert explorer.candidate.value == "with_skill"
    assert ALL_TAGS in explorer.tag.options and "office" in explorer.tag.options
    assert any("incomplete" in note for note in explorer.notes)
    episodes = ca.load_runs(RUNS / "skill-ab").episodes
    assert explorer.flips.equals(ca.flips(episodes, "baseline", "with_skill"))


def test_the_tag_filter_narrows_the_paired_tasks(explorer: Explorer) -> None:
    explorer.runs.value = ("skill-ab",)
    explorer.tag.value = "office"
    assert set(explorer.comparison["n_tasks"]) == {4}


def test_one_metric_gives_one_row(explorer: Explorer) -> None:
    explorer.metric.value = "cost_usd"
    assert explorer.comparison["metric"].tolist() == ["cost_usd"]
    explorer.metric.value = ALL_METRICS
    assert len(explorer.comparison) == len(REPORT_METRICS)


def test_the_same_variant_twice_is_an_error_not_a_crash(explorer: Explorer) -> None:
    explorer.candidate.value = "baseline"
    assert explorer.error is not None and "two different variants" in explorer.error
    assert explorer.comparison.empty


def test_no_run_selected_is_an_error_not_a_crash(explorer: Explorer) -> None:
    explorer.runs.value = ()
    assert explorer.error is not None and "pick at least one run" in explorer.error
    assert explorer.transcript == ""


def test_choosing_an_episode_shows_its_transcript(explorer: Explorer) -> None:
    label, path = explorer.episode.options[-1]
    explorer.episode.value = path
    assert explorer.transcript.startswith(f"# {label.split()[0]} ")
    assert "[user] " in explorer.transcript and "  → " in explorer.transcript


def test_flipped_tasks_are_offered_first(explorer: Explorer) -> None:
    first_task = explorer.episode.options[0][0].split("--")[0]
    assert first_task in set(explorer.flips["task_id"])


def test_transcript_of_an_interrupted_trajectory_says_so() -> None:
    text = transcript_text(RUNS / "skill-ab" / "episodes" / "merge-sheets--baseline--r2.jsonl")
    assert text.endswith("! no episode_end (interrupted)")


def test_explicit_run_directories_are_all_selected() -> None:
    runs, selected = discover_runs([RUNS / "skill-ab", RUNS / "three-way"])
    assert list(runs) == selected == ["skill-ab", "three-way"]


def test_a_path_that_is_neither_a_run_nor_a_folder_of_runs_is_refused(tmp_path: object) -> None:
    with pytest.raises(AnalysisError, match="not a run directory"):
        discover_runs([RUNS / "missing"])


def test_the_newest_run_opens_whatever_its_name(tmp_path: Path) -> None:
    from tests.store.histories import grid, write_run

    write_run(tmp_path, "zz-regraded", grid({"t": "pass"}), day=0)  # alphabetically last, but older
    write_run(tmp_path, "20261201-000000-000000", grid({"t": "fail"}), day=3)
    assert discover_runs([tmp_path])[1] == ["20261201-000000-000000"]


def test_two_runs_compare_as_run_baseline_compares_them(tmp_path: Path) -> None:
    from coder_eval.analysis.answer.baseline_run import against_baseline
    from tests.store.histories import grid, write_run

    tasks = [f"t{i}" for i in range(8)]
    write_run(tmp_path, "main", grid(dict.fromkeys(tasks, "pass"), ("with_skill",)), day=0)
    write_run(tmp_path, "pr", grid(dict.fromkeys(tasks, "fail"), ("with_skill",)), day=1)
    explorer = Explorer(tmp_path, n_resamples=FAST)
    assert explorer.runs.value == ("pr",) and explorer.comparison.empty  # one variant: nothing to compare

    explorer.against.value = "main"
    expected = against_baseline(ca.load_runs(tmp_path / "pr"), ca.load_runs(tmp_path / "main"), {}, {})
    called = expected.arms[0].verdicts.primary
    row = explorer.comparison.iloc[0]
    assert (row["metric"], row["diff"], row["p_value"], row["verdict"]) == (
        "passed",
        called.diff,
        called.p_value,
        "b_better",
    )
    assert (explorer.baseline.value, explorer.candidate.value, explorer.baseline.disabled) == (
        "with_skill",
        "with_skill",
        True,
    )
    assert "Run pr against the baseline run main (called worse)" in explorer.status_html()
    assert "8 tasks paired" in explorer.status_html()
    table = explorer.views["table"].outputs[0]["data"]["text/html"]
    assert "baseline main · with_skill" in table and "candidate pr · with_skill" in table
    assert next(label for label, _ in explorer.episode.options).startswith(("baseline: ", "candidate: "))

    explorer.runs.value = ("pr", "main")
    assert (
        explorer.error is not None and "pick one run to compare with the baseline run main" in explorer.error
    )
    explorer.runs.value = ("main",)
    assert explorer.error is not None and "is the baseline run itself" in explorer.error


def test_the_summary_shows_no_bare_nan_or_long_decimals(explorer: Explorer) -> None:
    summary = explorer.views["summary"].outputs[0]["data"]["text/html"]
    assert "NaN" not in summary and "nan" not in summary
    assert not re.search(r"\d\.\d{5,}", summary), summary
    assert "%" in summary


def drawn(view: object) -> bool:
    """Whether an ``Output`` widget shows a figure."""
    return any("image/png" in o.get("data", {}) for o in getattr(view, "outputs", ()))


def test_in_a_kernel_the_tables_show_before_the_figures_are_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real = widgets.forest_figure

    def held(comparisons: Any) -> Any:
        assert release.wait(60)
        return real(comparisons)

    monkeypatch.setattr(widgets, "forest_figure", held)
    explorer = Explorer(RUNS, n_resamples=FAST, figures_later=True)
    table = explorer.views["table"].outputs
    assert table and "explorer-comparison" in table[0]["data"]["text/html"]
    assert explorer.views["summary"].outputs and explorer.views["flips"].outputs
    assert not drawn(explorer.views["plot"]) and not explorer.figures.wait(0.2)
    release.set()
    assert explorer.figures.wait(60)
    assert all(drawn(explorer.views[name]) for name in ("plot", "amounts", "confusion"))


def test_figures_of_an_earlier_choice_never_replace_the_later_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    release, drawn_for = threading.Event(), []
    real = widgets.forest_figure

    def held(comparisons: Any) -> Any:
        drawn_for.append(str(comparisons["a"].iloc[0]))
        if len(drawn_for) == 1:
            assert release.wait(60)
        return real(comparisons)

    monkeypatch.setattr(widgets, "forest_figure", held)
    explorer = Explorer(RUNS, n_resamples=FAST, figures_later=True)  # with_hint, held
    explorer.candidate.value = "with_skill"  # a new choice while the first figure is drawn
    release.set()
    assert explorer.figures.wait(60)
    assert drawn_for == ["with_hint", "with_skill"]
    alone = Explorer(RUNS, n_resamples=FAST)
    alone.candidate.value = "with_skill"
    assert explorer.views["plot"].outputs == alone.views["plot"].outputs


def test_a_figure_that_fails_says_why_in_its_view_and_the_others_are_drawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(episodes: Any) -> Any:
        raise ValueError("no axes left")

    monkeypatch.setattr(widgets, "amounts_figure", broken)
    explorer = Explorer(RUNS, n_resamples=FAST, figures_later=True)
    assert explorer.figures.wait(60)
    shown = explorer.views["amounts"].outputs[0]["data"]["text/html"]
    assert "Figure not drawn: ValueError: no axes left" in shown
    assert drawn(explorer.views["plot"]) and drawn(explorer.views["confusion"])
