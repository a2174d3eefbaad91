"""Earlier runs of the planned tasks, read per variant for ``plan``'s forecast: finished valid
episodes only, a damaged run passed over, and no statistics imported to read them."""

from __future__ import annotations

from pathlib import Path

from coder_eval.analysis.stats.earlier_runs import Seen, history
from coder_eval.run import Batch, RunInputs, RunSession
from tests.helpers import REPO


def test_history_reads_earlier_runs_of_the_same_tasks_per_variant(tmp_path: Path) -> None:
    inputs = RunInputs(experiment=str(REPO / "experiments" / "coin_ab.yaml"), sample_tasks=4)
    with RunSession.create(inputs, tmp_path / "runs" / "pilot") as session:
        session.execute(Batch(jobs=2))
        tasks = session.manifest.tasks
    assert (tmp_path / "runs" / "latest").is_symlink()  # the run made it: read once, not twice

    seen = history(tmp_path / "runs", set(tasks))

    assert set(seen) == {"baseline", "with_skill"} and seen["baseline"].runs == {"pilot"}
    assert sorted(seen["baseline"].values["duration_s"]) == sorted(tasks)
    assert history(tmp_path / "runs", {"other"}) == {} and history(tmp_path / "none", set(tasks)) == {}
    (tmp_path / "runs" / "broken").mkdir()
    (tmp_path / "runs" / "broken" / "run.json").write_text("{not json", encoding="utf-8")
    assert history(tmp_path / "runs", set(tasks)) == seen  # a damaged run is passed over


def test_an_amount_not_recorded_is_left_out() -> None:
    seen = Seen()
    seen.add("t1", "cost_usd", None)
    seen.add("t1", "cost_usd", 0.5)
    seen.add("t2", "total_tokens", 12)
    assert seen.values == {"cost_usd": {"t1": [0.5]}, "total_tokens": {"t2": [12.0]}}
