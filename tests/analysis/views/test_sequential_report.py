"""A run that stopped at its answer in the reports: the record found, the sequence as a frame and a
plot, the episodes saved, the explorer's view, and the compare report saying it all."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

from coder_eval.analysis.views.sequential_report import (
    NOT_VALID_AFTER_STOPPING,
    plot_sequence,
    saved_text,
    sequence_frame,
    sequence_views,
    stopping,
)
from coder_eval.manifest import AdaptiveRecord, UntilConclusiveRule
from coder_eval.run import Batch, RunInputs, RunSession
from coder_eval.run.adaptive import execute_until_conclusive, start
from coder_eval.run.render import parse_params, render_report
from tests.helpers import REPO

matplotlib.use("Agg")


def stopped_run(folder: Path) -> tuple[Path, AdaptiveRecord]:
    run_dir = folder / "ab"
    with RunSession.create(
        RunInputs(experiment=str(REPO / "experiments" / "coin_ab.yaml")), run_dir
    ) as session:
        start(session, UntilConclusiveRule(seed=0))
        return run_dir, execute_until_conclusive(session, Batch(jobs=2))


def test_the_record_frame_plot_and_savings(tmp_path: Path) -> None:
    run_dir, record = stopped_run(tmp_path)
    (tmp_path / "plain").mkdir()

    assert stopping([tmp_path / "plain", run_dir]) == record
    frame = sequence_frame(record)
    assert list(frame.look) == list(range(1, record.decided_tasks + 1))
    assert frame.high.is_monotonic_decreasing and frame.low.iloc[-1] > 0
    ran = (record.decided_tasks + len(record.in_flight)) * 2
    assert saved_text(record).startswith(f"{ran} episodes") and "runs 120" in saved_text(record)
    ax = plot_sequence(record)
    assert ax.get_xlim() == (1, 60) and len(ax.collections) == 1


def test_the_explorer_view_and_a_fixed_run(tmp_path: Path) -> None:
    run_dir, record = stopped_run(tmp_path)

    views = sequence_views([run_dir])
    assert record.reason in views[0]["data"]["text/html"] and "image/png" in views[1]["data"]
    assert "fixed design" in sequence_views([tmp_path])[0]["data"]["text/html"]


def test_the_compare_report_shows_the_stop_and_labels_fixed_design_intervals(tmp_path: Path) -> None:
    run_dir, record = stopped_run(tmp_path)
    result = render_report([run_dir], "compare_report", parse_params([]), out_dir=tmp_path / "r")

    assert result.ok, result
    text = re.sub(r"<[^>]+>", "", Path(result.html_path).read_text())
    assert f"Stopped: {record.reason}" in " ".join(text.split())
    assert NOT_VALID_AFTER_STOPPING.split(":")[0] in text


def test_the_plot_names_the_scale_an_amount_is_decided_on() -> None:
    from coder_eval.analysis.views.sequential_report import scale_label
    from coder_eval.manifest import SequencePath

    record = AdaptiveRecord(
        rule=UntilConclusiveRule(metrics=["passed", "cost_usd"]), baseline="b", candidate="c", seed=0,
        order=["t"], max_tasks=1, episodes_per_task=2,
        paths=[SequencePath(metric="passed"), SequencePath(metric="cost_usd")],
    )  # fmt: skip
    assert scale_label(record) == "difference; amounts: log(baseline / candidate) / log 4"
    alone = record.model_copy(update={"paths": [SequencePath(metric="passed")]})
    assert scale_label(alone) == "c − b"
