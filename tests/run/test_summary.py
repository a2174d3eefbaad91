"""A run's totals per variant and its episodes that did not pass, read from the run directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import coder_eval.analysis as ca
from coder_eval.run.summary import summarize_run
from coder_eval.run_dir import RunDir
from coder_eval.trajectory import EpisodeEnd, EpisodeStart, TrajectoryWriter
from tests.helpers import REPO

RUN = REPO / "tests" / "fixtures" / "runs" / "three-way"


def test_the_totals_agree_with_the_analysis_frames() -> None:
    summary = summarize_run(RunDir.open(RUN))
    episodes = ca.load_runs(RUN).episodes
    assert [v.variant_id for v in summary.variants] == ["baseline", "with_skill", "with_hint"]
    for totals in summary.variants:
        mine = episodes[episodes.variant_id == totals.variant_id]
        assert totals.outcomes == {k: int((mine.outcome == k).sum()) for k in ("pass", "fail", "invalid")}
        assert totals.cost_usd == pytest.approx(mine.cost_usd.sum())
        assert totals.tokens == mine.total_tokens.sum()
        assert totals.seconds == pytest.approx(mine.duration_s.sum())
    assert {n.episode_id for n in summary.not_passed} == set(episodes[episodes.outcome != "pass"].episode_id)
    assert summary.measured and summary.unfinished == 0


def test_unstarted_and_interrupted_episodes_are_unfinished_not_counted(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "episodes" / "csv-report--baseline--r0.jsonl").unlink()
    cut = run / "episodes" / "csv-report--with_hint--r0.jsonl"
    cut.write_text(cut.read_text().splitlines()[0] + "\n")
    summary = summarize_run(RunDir.open(run))
    assert summary.unfinished == 2 and summary.finished == 16


def test_a_run_whose_every_finished_episode_is_invalid_measured_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    for path in (run / "episodes").glob("*.jsonl"):
        path.unlink()
        with TrajectoryWriter(path) as sink:
            sink.write(EpisodeStart(run_id="r", episode_id=path.stem, task_id="t", seed=1))
            sink.write(EpisodeEnd(outcome="invalid", status="infra_error", error="model API error 401"))
    summary = summarize_run(RunDir.open(run))
    assert not summary.measured
    assert {n.reason for n in summary.not_passed} == {"infra_error: model API error 401"}
