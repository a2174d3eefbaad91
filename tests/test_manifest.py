"""run.json: typed records (schema 2), and manifests of schema 1 (records under ``extra``) still read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coder_eval.analysis.stats.headline_tasks import compare_selection
from coder_eval.errors import ManifestError
from coder_eval.manifest import MANIFEST, MANIFEST_SCHEMA_VERSION, read_manifest
from coder_eval.run.junit import write_junit
from coder_eval.run_dir import RunDir

GATE = {
    "gate": "min_pass_rate", "variant_id": "a", "metric": "pass_rate", "threshold": 0.5, "value": 1.0,
    "ci_low": None, "ci_high": None, "label": None, "verdict": "pass", "note": "",
}  # fmt: skip
HEADLINE = {"available": True, "baseline": "a", "candidate": "b", "verdict": "better", "line": "b beats a"}
VERSION_1: dict[str, Any] = {
    "schema_version": 1,
    "run_id": "old",
    "status": "completed",
    "variants": ["a", "b"],
    "episodes": [{"episode_id": "t--a--r0", "task_id": "t", "variant_id": "a", "repeat": 0}],
    "extra": {
        "inputs": {"paths": ["/abs/tasks"], "defines": ["run_limits.max_turns=3"], "unknown_option": 1},
        "experiment": {
            "path": "/abs/experiments/ab.yaml",
            "variants": [
                {"variant_id": "a", "description": "", "repeats": 1, "agents": ["oracle"], "models": []}
            ],
            "compare": {"tags": ["core"], "exclude_tags": []},
        },
        "budget": {"max_cost_usd": 1.5, "spent_usd": 2.0, "stopped": True, "not_started": 2},
        "gates": [GATE],
        "headline": HEADLINE,
        "note": "kept by hand",
    },
}


def write(folder: Path, data: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_schema_1_manifest_reads_with_its_records_lifted_into_their_fields(tmp_path: Path) -> None:
    manifest = read_manifest(write(tmp_path / "old", VERSION_1))
    assert manifest.schema_version == MANIFEST_SCHEMA_VERSION == 2
    assert manifest.inputs is not None and manifest.inputs.defines == ["run_limits.max_turns=3"]
    assert manifest.experiment is not None and manifest.experiment.compare.tags == ["core"]
    assert manifest.experiment.variants[0].agents == ["oracle"]
    assert manifest.budget is not None and (manifest.budget.spent_usd, manifest.budget.not_started) == (
        2.0,
        2,
    )
    assert manifest.gates is not None and manifest.gates[0].model_dump() == GATE
    assert manifest.headline == HEADLINE
    assert manifest.extra == {"note": "kept by hand"}  # what no field holds stays where it was


def test_a_schema_1_manifest_written_back_is_schema_2(tmp_path: Path) -> None:
    folder = write(tmp_path / "old", VERSION_1)
    run = RunDir.open(folder)
    run.write_manifest(run.read_manifest())
    data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    assert data["schema_version"] == 2 and data["extra"] == {"note": "kept by hand"}
    assert data["budget"]["spent_usd"] == 2.0 and data["gates"] == [GATE] and data["headline"] == HEADLINE
    assert data["inputs"]["paths"] == ["/abs/tasks"] and "unknown_option" not in data["inputs"]


def test_the_readers_of_a_run_find_the_records_of_a_schema_1_manifest(tmp_path: Path) -> None:
    folder = write(tmp_path / "old", VERSION_1)
    assert compare_selection([folder]).tags == ("core",)  # the compare report's headline tasks
    write_junit(RunDir.open(folder), tmp_path / "junit.xml")
    assert 'name="headline.line" value="b beats a"' in (tmp_path / "junit.xml").read_text(encoding="utf-8")


def test_a_field_set_in_both_places_keeps_the_field(tmp_path: Path) -> None:
    data = {**VERSION_1, "schema_version": 2, "headline": {"available": False, "line": "new"}}
    manifest = read_manifest(write(tmp_path / "both", data))
    assert manifest.headline == {"available": False, "line": "new"}
    assert manifest.extra["headline"] == HEADLINE  # not lost: left where it was found


@pytest.mark.parametrize("version", [0, 3, True, "2"])
def test_other_schema_versions_are_refused_naming_the_file(tmp_path: Path, version: object) -> None:
    folder = write(tmp_path / "r", {"run_id": "r", "schema_version": version})
    with pytest.raises(ManifestError, match="is not supported") as raised:
        read_manifest(folder)
    assert str(folder / MANIFEST) in str(raised.value) and "reads 1 and 2" in str(raised.value)


def test_a_damaged_record_names_its_field(tmp_path: Path) -> None:
    data = {**VERSION_1, "extra": {"budget": {"max_cost_usd": "a lot"}}}
    with pytest.raises(ManifestError, match=r"budget\.max_cost_usd"):
        read_manifest(write(tmp_path / "bad", data))
