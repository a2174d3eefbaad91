"""``coder-eval view`` without a browser: its input checks, the notebook it serves, the transcript page,
the token every request needs.

The served explorer itself is driven in Chromium by tests/test_explore_browser.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode
from urllib.request import urlopen

import jupytext
import pytest
import tornado.web

from coder_eval.cli.viewer import explore_notebook, inside, served_trajectory, transcript_page
from coder_eval.trajectory import (
    CriterionResult,
    EpisodeEnd,
    EpisodeStart,
    Message,
    PhaseEvent,
    TrajectoryWriter,
)
from tests.helpers import REPO, coder_eval, served_view

RUNS = REPO / "tests" / "fixtures" / "runs"
EPISODE = RUNS / "three-way" / "episodes" / "csv-report--baseline--r0.jsonl"


def test_view_without_runs_exits_2_and_says_what_to_do(tmp_path: Path) -> None:
    result = coder_eval("view", "--no-browser", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        "runs: not a run directory or a folder of runs (run something first: coder-eval run" in result.stderr
    )
    missing = coder_eval("view", "nowhere", "--no-browser", cwd=tmp_path)
    assert missing.returncode == 2 and "not a run directory or a folder of runs" in missing.stderr


def test_view_without_voila_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from coder_eval.cli import main

    monkeypatch.setitem(sys.modules, "coder_eval.cli.viewer", None)  # as if Voila were not installed
    with pytest.raises(SystemExit) as exited:
        main(["view", str(RUNS), "--no-browser"])
    assert exited.value.code == 2
    assert "pip install 'coder-eval-toolkit[lab]'" in capsys.readouterr().err


def test_the_served_notebook_preloads_the_runs(tmp_path: Path) -> None:
    notebook = explore_notebook([RUNS / "skill-ab", RUNS / "three-way"], tmp_path)
    cells = [c for c in jupytext.read(notebook).cells if "parameters" in c.metadata.get("tags", [])]
    assert cells[0].source.startswith(f"runs: str = '{RUNS / 'skill-ab'},{RUNS / 'three-way'}'")


def test_the_transcript_page_is_readable_html() -> None:
    page = transcript_page(EPISODE)
    assert page.startswith("<!DOCTYPE html>")
    assert "<h1>csv-report--baseline--r0 (task csv-report, variant baseline, repeat 0)</h1>" in page
    assert '<div class="line user">[user] Summarise sales.csv into report.xlsx</div>' in page
    assert '<div class="line end">= ' in page


def test_each_line_of_the_page_is_styled_as_the_event_it_belongs_to(tmp_path: Path) -> None:
    path = tmp_path / "t--v--r0.jsonl"
    with TrajectoryWriter(path) as sink:
        sink.write(EpisodeStart(run_id="r", episode_id="t--v--r0", task_id="t", seed=1))
        sink.write(Message(role="assistant", content=[{"type": "text", "text": "one\ntwo"}]))
        sink.write(PhaseEvent(name="verify"))
        sink.write(
            CriterionResult(criterion_id="c", kind="k", score=0, passed=False, details={"error": "no x"})
        )
        sink.write(EpisodeEnd(outcome="fail", status="completed", error="it broke\nbadly"))
    classes = re.findall(r'<div class="([^"]*)">', transcript_page(path))
    assert classes[1:] == [
        "line assistant",
        "line assistant more",
        "line phase",
        "line criterion",
        "line criterion more",
        "line end",
        "line end more",
        "line end more",
    ]


def test_only_trajectories_of_the_given_runs_are_served(tmp_path: Path) -> None:
    allowed = inside([RUNS / "three-way"])
    assert served_trajectory(str(EPISODE), allowed) == EPISODE
    other = RUNS / "skill-ab" / "episodes" / "memo-docx--baseline--r0.jsonl"
    for path in (str(other), "/etc/passwd", str(RUNS / "three-way" / "run.json"), str(tmp_path / "x.jsonl")):
        with pytest.raises(tornado.web.HTTPError) as refused:
            served_trajectory(path, allowed)
        assert refused.value.status_code == 404


def test_server_and_kernels_agree_on_the_transcript_variable() -> None:
    from coder_eval.analysis.views import notebook
    from coder_eval.cli import viewer

    assert viewer.TRANSCRIPT_URL_ENV == notebook.TRANSCRIPT_URL_ENV


@pytest.mark.slow
def test_the_served_explorer_answers_only_with_the_token_it_printed(tmp_path: Path) -> None:
    pytest.importorskip("voila")
    from coder_eval.cli.viewer import free_port

    with served_view([str(RUNS), "--port", str(free_port())], tmp_path) as view:
        transcript = f"{view.base}coder-eval/transcript?{urlencode({'path': EPISODE})}"
        page = urlopen(f"{transcript}&token={view.token}", timeout=60)
        assert "[user] Summarise sales.csv" in page.read().decode()
        assert urlopen(view.url, timeout=60).status == 200
        stranger = urlopen(transcript, timeout=60)  # followed to the login page
        assert stranger.url.startswith(f"{view.base}login?next=")
        assert "Summarise sales.csv" not in stranger.read().decode()  # the login page, not the transcript


def test_the_viewer_starts_without_building_jsonschemas_iri_grammar(tmp_path: Path) -> None:
    pytest.importorskip("voila")
    code = (
        "import sys\n"
        "from coder_eval.lazy import without_iri_format\n"
        "without_iri_format()\n"
        "import coder_eval.cli.viewer, jsonschema\n"
        "checker = jsonschema.Draft202012Validator.FORMAT_CHECKER\n"
        "print('rfc3987_syntax' in sys.modules and sys.modules['rfc3987_syntax'] is not None)\n"
        "print('iri' in checker.checkers, checker.conforms('127.0.0.1', 'ipv4'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "False", "True"]  # the other formats are still checked
