"""JUnit XML for CI: one testcase per planned episode.

``classname`` is the task id, ``name`` is ``<variant>/r<repeat>``, ``time`` the episode's total
seconds. A failed episode is a ``<failure>`` listing its failing gating criteria; an invalid one an
``<error>`` with the reason; an episode without ``episode_end`` an ``<error>`` (interrupted); an
episode never started (a budget stop) is ``<skipped>``. One ``<testsuite>`` per variant.

When the run recorded its headline comparison (``run.json`` ``extra.headline``, written at the end
of ``coder-eval run``), every suite carries it as ``<properties>`` (``headline.verdict``,
``headline.effect``, the verdict's interval, p, tasks, the line the console printed): the same
record the reports' summary.json hold.

Example::

    counts = write_junit(RunDir.open(Path("runs/latest")), Path("junit.xml"))
    counts.failures, counts.errors
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from coder_eval.run_dir import PlannedEpisode, RunDir
from coder_eval.trajectory import CriterionResult, EpisodeEnd, read_trajectory

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
MESSAGE_LIMIT = 2_000


@dataclass
class JunitCounts:
    """Totals written to the root ``<testsuites>`` element."""

    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    time: float = 0.0


def write_junit(run: RunDir, path: Path) -> JunitCounts:
    """Write ``path`` for the run's planned episodes and return the totals."""
    manifest = run.read_manifest()
    root = ET.Element("testsuites", name=manifest.experiment_id)
    totals = JunitCounts()
    for variant in manifest.variants or sorted({e.variant_id for e in manifest.episodes}):
        suite = ET.SubElement(root, "testsuite", name=f"{manifest.experiment_id}/{variant}")
        _headline_properties(suite, manifest.headline)
        counts = JunitCounts()
        for planned in (e for e in manifest.episodes if e.variant_id == variant):
            _testcase(suite, planned, run, counts)
        _set_counts(suite, counts)
        for name in ("tests", "failures", "errors", "skipped", "time"):
            setattr(totals, name, getattr(totals, name) + getattr(counts, name))
    _set_counts(root, totals)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return totals


def _testcase(suite: ET.Element, planned: PlannedEpisode, run: RunDir, counts: JunitCounts) -> None:
    case = ET.SubElement(
        suite, "testcase", classname=planned.task_id, name=f"{planned.variant_id}/r{planned.repeat}"
    )
    counts.tests += 1
    file = run.episode_path(planned.episode_id)
    if not file.exists():
        ET.SubElement(case, "skipped", message="not started (the run stopped before this episode)")
        counts.skipped += 1
        case.set("time", "0")
        return
    trajectory = read_trajectory(file)
    end = trajectory.end
    seconds = end.timings.total_s if isinstance(end, EpisodeEnd) else 0.0
    case.set("time", f"{seconds:.3f}")
    counts.time += seconds
    if not isinstance(end, EpisodeEnd):
        _child(case, "error", "interrupted: the trajectory has no episode_end", str(file))
        counts.errors += 1
    elif end.outcome == "invalid":
        _child(case, "error", f"invalid ({end.status}): {end.error or 'no reason recorded'}", str(file))
        counts.errors += 1
    elif end.outcome == "fail":
        failing = [
            e for e in trajectory.events if isinstance(e, CriterionResult) and e.gating and not e.passed
        ]
        names = ", ".join(e.criterion_id for e in failing) or end.status
        lines = [f"{e.criterion_id} ({e.kind}): score {e.score:.2f} {e.error or e.details}" for e in failing]
        if end.error:
            lines.insert(0, f"{end.status}: {end.error}")
        _child(case, "failure", f"failed: {names}", "\n".join([*lines, str(file)]))
        counts.failures += 1


HEADLINE_KEYS = (
    "baseline", "candidate", "metric", "n_tasks", "effect", "verdict_ci_low", "verdict_ci_high",
    "verdict_confidence", "verdict_method", "p_value", "p_adjusted", "test", "verdict", "line",
)  # fmt: skip


def _headline_properties(suite: ET.Element, headline: object) -> None:
    if not isinstance(headline, dict) or not headline.get("available"):
        return
    properties = ET.SubElement(suite, "properties")
    for key in HEADLINE_KEYS:
        value = headline.get(key)
        ET.SubElement(
            properties, "property", name=f"headline.{key}", value=_clean("" if value is None else str(value))
        )


def _child(case: ET.Element, tag: str, message: str, text: str) -> None:
    element = ET.SubElement(case, tag, message=_clean(message), type=tag)
    element.text = _clean(text)


def _clean(text: str) -> str:
    return _NOT_XML.sub("?", text)[:MESSAGE_LIMIT]


def _set_counts(element: ET.Element, counts: JunitCounts) -> None:
    for name in ("tests", "failures", "errors", "skipped"):
        element.set(name, str(getattr(counts, name)))
    element.set("time", f"{counts.time:.3f}")
