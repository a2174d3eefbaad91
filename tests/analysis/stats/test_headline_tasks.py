import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from coder_eval.analysis import compare, headline_tasks, load_runs
from coder_eval.analysis.stats.headline_tasks import (
    CompareSelection,
    classification_only_tasks,
    compare_selection,
)
from coder_eval.cli import main
from coder_eval.errors import AnalysisError
from tests.analysis.builders import episodes_frame
from tests.experiment.builders import two_tasks, write_experiment


def criteria_frame(rows: list[tuple[str, str, str | None]]) -> pd.DataFrame:
    """(task, criterion, expected label or None) rows of a criteria frame."""
    return pd.DataFrame(
        [
            {"task_id": t, "criterion_id": c, "expected_label": label, "observed_label": label}
            for t, c, label in rows
        ]
    )


TAGS = {"g1": ["api"], "g2": ["api", "slow"], "g3": ["docs"], "row1": ["triggers"], "row2": ["triggers"]}


def suite() -> tuple[pd.DataFrame, pd.DataFrame]:
    outcomes = {v: {t: ["pass", "fail"] for t in TAGS} for v in ("a", "b")}
    episodes = episodes_frame(outcomes)
    episodes["tags"] = [TAGS[t] for t in episodes["task_id"]]
    criteria = criteria_frame(
        [("g1", "tests", None), ("g2", "tests", None), ("g2", "skill", "sitectl"), ("g3", "answer", None),
         ("row1", "skill", "sitectl"), ("row2", "skill", "none")]
    )  # fmt: skip
    return episodes, criteria


def test_classification_only_tasks_are_left_out_of_the_headline() -> None:
    episodes, criteria = suite()
    assert classification_only_tasks(criteria) == ["row1", "row2"]
    chosen = headline_tasks(episodes, criteria)
    assert chosen.tasks == ["g1", "g2", "g3"] and chosen.classification_tasks == ["row1", "row2"]
    assert chosen.description == "3 tasks; left out: 2 classification-only"
    assert compare(chosen.episodes, "a", "b").n_tasks == 3
    assert headline_tasks(episodes, criteria, include_classification=True).tasks == sorted(TAGS)


def test_tags_and_exclude_tags_choose_the_headline_tasks() -> None:
    episodes, criteria = suite()
    chosen = headline_tasks(episodes, criteria, tags=["api", "docs"], exclude_tags=["slow"])
    assert chosen.tasks == ["g1", "g3"] and chosen.tag_excluded == ["g2"]
    assert (
        chosen.description
        == "2 tasks (tags: api, docs; not tagged slow); left out: 2 classification-only, 1 by tags"
    )


def test_the_experiments_compare_block_is_recorded_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two_tasks(tmp_path)  # task a tagged x, task b tagged y
    write_experiment(
        tmp_path,
        """
        experiment_id: ab
        variants:
          - {variant_id: oracle, agent: {kind: oracle}}
          - {variant_id: nothing, agent: {kind: none}}
        compare: {tags: [x], exclude_tags: [y]}
        """,
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["coder-eval", "run", "tasks", "-e", "experiment.yaml", "--no-report"])
    with pytest.raises(SystemExit):
        main()
    run = (tmp_path / "runs" / "latest").resolve()
    record = json.loads((run / "run.json").read_text())["experiment"]["compare"]
    assert record == {"tags": ["x"], "exclude_tags": ["y"]}
    declared = compare_selection([run])
    assert declared == CompareSelection(("x",), ("y",))
    runs = load_runs(run)
    assert headline_tasks(runs.episodes, runs.criteria, declared.tags, declared.exclude_tags).tasks == ["a"]


def test_runs_that_declare_different_headlines_are_refused(tmp_path: Path) -> None:
    for name, tags in (("r1", ["x"]), ("r2", ["y"])):
        (tmp_path / name).mkdir()
        manifest = {"run_id": name, "extra": {"experiment": {"compare": {"tags": tags, "exclude_tags": []}}}}
        (tmp_path / name / "run.json").write_text(json.dumps(manifest))
    assert compare_selection([tmp_path / "r1", tmp_path / "nothing-here"]).tags == ("x",)
    with pytest.raises(AnalysisError, match="different compare blocks"):
        compare_selection([tmp_path / "r1", tmp_path / "r2"])
