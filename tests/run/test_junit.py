"""JUnit XML: one testcase per planned episode, valid XML, counts that add up."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from coder_eval.run.junit import write_junit
from coder_eval.run_dir import PlannedEpisode, RunDir, RunManifest, episode_id
from coder_eval.trajectory import CriterionResult, EpisodeEnd, EpisodeStart, Timings, TrajectoryWriter
from tests.analysis.builders import write_episode

OUTCOMES = {"t0": "pass", "t1": "fail", "t2": "invalid", "t3": "interrupted", "t4": "not started"}


def write_run(tmp_path: Path) -> RunDir:
    for task, outcome in OUTCOMES.items():
        if outcome in ("pass", "fail", "invalid"):
            write_episode(tmp_path, task, "base", outcome=outcome)
        elif outcome == "interrupted":
            write_episode(tmp_path, task, "base", end=False)
    run = RunDir(tmp_path / "run1")
    _ansi_failure(run)
    planned = [*OUTCOMES, "t5"]
    manifest = RunManifest(
        run_id="run1",
        experiment_id="exp",
        variants=["base", "cand"],
        episodes=[
            PlannedEpisode(episode_id=episode_id(t, "base", 0), task_id=t, variant_id="base", repeat=0)
            for t in planned
        ]
        + [PlannedEpisode(episode_id=episode_id("t0", "cand", 1), task_id="t0", variant_id="cand", repeat=1)],
    )
    run.write_manifest(manifest)
    return run


def _ansi_failure(run: RunDir) -> None:
    """t5: a failure whose messages hold terminal colour codes (not allowed in XML 1.0)."""
    ep = episode_id("t5", "base", 0)
    with TrajectoryWriter(run.episode_path(ep)) as sink:
        sink.write(EpisodeStart(run_id="run1", episode_id=ep, task_id="t5", variant_id="base", seed=0))
        sink.write(
            CriterionResult(
                criterion_id="lint", kind="run_command", score=0, passed=False, error="\x1b[31mE501\x1b[0m"
            )
        )
        sink.write(
            EpisodeEnd(outcome="fail", status="timeout", error="cut \x00off", timings=Timings(total_s=2.5))
        )


def parse(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def test_counts_and_structure(tmp_path: Path) -> None:
    counts = write_junit(write_run(tmp_path), tmp_path / "out" / "junit.xml")
    root = parse(tmp_path / "out" / "junit.xml")
    assert (counts.tests, counts.failures, counts.errors, counts.skipped) == (7, 2, 2, 2)
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "7",
        "failures": "2",
        "errors": "2",
        "skipped": "2",
    }
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["exp/base", "exp/cand"]
    assert [s.get("tests") for s in suites] == ["6", "1"]
    assert sum(len(s.findall("testcase")) for s in suites) == int(root.get("tests", "0"))


def test_each_outcome_maps_to_its_element(tmp_path: Path) -> None:
    write_junit(write_run(tmp_path), tmp_path / "junit.xml")
    cases = {(c.get("classname"), c.get("name")): c for c in parse(tmp_path / "junit.xml").iter("testcase")}
    passed = cases["t0", "base/r0"]
    assert list(passed) == [] and passed.get("time") == "10.000"
    failure = cases["t1", "base/r0"].find("failure")
    assert failure is not None and failure.get("message") == "failed: tests"
    error = cases["t2", "base/r0"].find("error")
    assert error is not None and (error.get("message") or "").startswith("invalid (completed)")
    interrupted = cases["t3", "base/r0"].find("error")
    assert interrupted is not None and "interrupted" in (interrupted.get("message") or "")
    assert cases["t4", "base/r0"].find("skipped") is not None
    assert cases["t0", "cand/r1"].find("skipped") is not None


def test_control_characters_are_replaced(tmp_path: Path) -> None:
    write_junit(write_run(tmp_path), tmp_path / "junit.xml")
    case = next(c for c in parse(tmp_path / "junit.xml").iter("testcase") if c.get("classname") == "t5")
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "failed: lint"
    assert "timeout: cut ?off" in (failure.text or "") and "?[31mE501" in (failure.text or "")
    assert case.get("time") == "2.500"
