"""What people open is inert: markup an agent plants in any field it controls reaches every HTML
surface as text, never as markup (the three reports, the explorer, the transcript page).

The fields an agent (or its model) controls, as a trajectory records them: its messages, the model
name it reports, tool names, tool inputs (a Bash command), tool output, the label a classification
criterion observes, a judge's rationale, a grader's error, and an error the episode ended with. The
trajectory is the same on every driver (tempdir, bwrap, docker), so the pages are checked once, from
trajectories that carry a payload in each of those fields. A ``$`` is planted in the label as well:
matplotlib reads it as math and a stray one used to fail the whole figure.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from coder_eval.analysis.views.widgets import Explorer
from coder_eval.cli.viewer import transcript_page
from coder_eval.run.render import render_report
from coder_eval.run_dir import PlannedEpisode, RunDir, RunManifest, episode_id
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Message,
    Timings,
    ToolCall,
    ToolResult,
    TrajectoryWriter,
    Usage,
)

pytestmark = pytest.mark.slow
FIELDS = ("message", "model", "tool", "command", "output", "label", "rationale", "grader", "error")
PAYLOAD = {field: f"<img src=x onerror=alert({i})>" for i, field in enumerate(FIELDS, start=11)}
PAYLOAD["message"] = "<script>alert(11)</script>"
PAYLOAD["label"] += "$x_{$"
PLANTED = re.compile(r"alert\(1\d\)")


class LiveMarkup(HTMLParser):
    """Collects every planted payload that a browser would run: an ``on…`` attribute or a script.

    HTML exporters rewrite the markup they pass through (nbconvert adds ``alt=`` to an ``<img>``), so
    the page is parsed, not searched for the planted text.
    """

    def __init__(self) -> None:
        super().__init__()
        self.live: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.in_script = tag == "script"
        self.live += [f"<{tag} {k}={v}>" for k, v in attrs if k.startswith("on") and PLANTED.search(v or "")]

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and PLANTED.search(data):
            self.live.append(f"<script>{data[:40]}")


def live_markup(page: str) -> list[str]:
    parser = LiveMarkup()
    parser.feed(page)
    return parser.live


def escaped(field: str) -> str:
    """How the payload of ``field`` reads once escaped (the text an HTML page must show)."""
    return PAYLOAD[field].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def planted_episode(
    run: RunDir, task: str, variant: str, repeat: int, *, labelled: bool, invalid: bool
) -> None:
    ep = episode_id(task, variant, repeat)
    with TrajectoryWriter(run.episode_path(ep)) as sink:
        sink.write(EpisodeStart(run_id=run.path.name, episode_id=ep, task_id=task, variant_id=variant, repeat=repeat,
                                seed=0, agent={"kind": "command"}, task={"initial_prompt": f"do {task}"}))  # fmt: skip
        sink.write(Message(role="user", content=[{"type": "text", "text": "please"}]))
        sink.write(Message(role="assistant", model=PAYLOAD["model"], content=[{"type": "text", "text": PAYLOAD["message"]}],
                           usage=Usage(input_tokens=100 + repeat, output_tokens=10)))  # fmt: skip
        sink.write(ToolCall(id="c1", name=PAYLOAD["tool"], input={"command": PAYLOAD["command"]}))
        sink.write(ToolResult(id="c1", output=PAYLOAD["output"], is_error=True, duration_s=0.1))
        sink.write(ToolCall(id="c2", name="Bash", input={"command": PAYLOAD["command"]}))
        sink.write(ToolResult(id="c2", output=PAYLOAD["output"], is_error=True, duration_s=0.1))
        if labelled:
            observed = PAYLOAD["label"] if variant == "with_skill" else "none"
            sink.write(CriterionResult(criterion_id="skill", kind="skill_triggered", score=0.0, passed=False,
                                       observed_label=observed, expected_label="sitectl"))  # fmt: skip
        else:
            votes = [{"passed": v, "score": float(v), "rationale": PAYLOAD["rationale"], "input_tokens": 10,
                      "output_tokens": 2, "cost_usd": 0.001} for v in (True, False, repeat % 2 == 0)]  # fmt: skip
            sink.write(CriterionResult(criterion_id="judge", kind="llm_judge", score=1.0, passed=repeat % 2 == 0,
                                       details={"votes": votes}, error=PAYLOAD["grader"] if repeat else None))  # fmt: skip
        outcome = "invalid" if invalid else ("pass" if repeat % 2 == 0 else "fail")
        sink.write(EpisodeEnd(outcome=outcome, status="agent_error" if invalid else "completed",  # type: ignore[arg-type]
                              score=float(outcome == "pass"), timings=Timings(total_s=5.0 + repeat), num_turns=2,
                              cost_usd=0.01 * (repeat + 1), usage=Usage(input_tokens=100, output_tokens=10),
                              error=PAYLOAD["error"] if invalid else None))  # fmt: skip


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    root = tmp_path_factory.mktemp("planted")
    run = RunDir.create(root, RunManifest(run_id="planted", variants=["baseline", "with_skill"]))
    planned = []
    for variant in ("baseline", "with_skill"):
        for task in [f"task{i}" for i in range(6)] + [f"row{i}" for i in range(4)]:
            for repeat in range(2):
                invalid = task == "task5" and repeat == 1 and variant == "with_skill"
                planted_episode(run, task, variant, repeat, labelled=task.startswith("row"), invalid=invalid)
                planned.append(PlannedEpisode(episode_id=episode_id(task, variant, repeat), task_id=task,
                                              variant_id=variant, repeat=repeat))  # fmt: skip
    manifest = run.read_manifest()
    manifest.episodes, manifest.status = planned, "completed"
    run.write_manifest(manifest)
    return run


def assert_inert(page: str, shown: tuple[str, ...], where: str) -> None:
    assert not live_markup(page), f"{where}: planted markup is live: {live_markup(page)[:3]}"
    for field in shown:
        assert escaped(field) in page, f"{where}: the {field} payload is not shown (as text)"


@pytest.mark.parametrize(
    ("template", "params", "shown"),
    [
        ("run_report", {}, ("model", "tool", "command", "rationale", "error")),
        ("compare_report", {}, ()),
        ("classification_report", {"criterion": "skill"}, ("label",)),
    ],
)
def test_every_report_shows_planted_markup_as_text(
    planted: RunDir, tmp_path: Path, template: str, params: dict[str, str], shown: tuple[str, ...]
) -> None:
    result = render_report([planted.path], template, params, out_dir=tmp_path)
    assert result.ok, result.error
    assert_inert(result.html_path.read_text(encoding="utf-8"), shown, template)
    json.loads(result.summary_path.read_text(encoding="utf-8"))  # the summary holds the text as data


def test_the_explorer_shows_planted_markup_as_text(planted: RunDir) -> None:
    explorer = Explorer(planted.path, n_resamples=199)
    explorer.episode.value = next(path for label, path in explorer.episode.options if "with_skill" in label)
    pages = [explorer.status.value]
    for view in explorer.views.values():
        pages += [o["data"]["text/html"] for o in view.outputs if "text/html" in o.get("data", {})]
    assert_inert("\n".join(pages), ("message", "tool", "command", "output"), "explorer")
    assert PAYLOAD["message"] in explorer.transcript  # the text itself, kept whole


def test_the_transcript_page_shows_planted_markup_as_text(planted: RunDir) -> None:
    page = transcript_page(planted.episode_path(episode_id("task0", "with_skill", 1)))
    assert_inert(page, ("message", "tool", "command", "output", "grader"), "transcript page")
