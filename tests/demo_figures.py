"""The figures section of docs/demo.md, written from a run of the demo, never by hand.

``python -m tests.demo_figures --write`` (``make demo-figures``) runs the whole demo as ``make run``
does (reports and a JUnit file too) and rewrites the section between the markers; tests/test_demo.py
runs it again and fails when the section differs from what the run produced.

Only what a run reproduces exactly is quoted: outcomes, pass rates, turns and the verdicts on them
(the scripted model's branches are seeded by episode id). Token counts are left out: the real CLI's
own side requests vary them a little from run to run, so a figure quoted from them would make the
test flaky. Cost is $0 (a scripted model has no price) and is said in words.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import coder_eval.analysis as ca
from coder_eval.analysis.answer.engine import Verdicts, verdicts
from coder_eval.analysis.answer.wording import (
    effect_text,
    interval_text,
    mde_text,
    p_value_text,
    verdict_text,
)
from tests.helpers import REPO

DOC = REPO / "docs" / "demo.md"
BEGIN, END = "<!-- figures: begin (tests/demo_figures.py writes this section) -->", "<!-- figures: end -->"
ARMS = ("baseline", "with_skill")


@dataclass(frozen=True)
class DemoRun:
    """The whole demo, run by ``make run``'s own command (with a JUnit file) from ``folder``:
    ``folder/runs/latest`` (the run), ``folder/reports/<run id>`` (its reports), ``folder/junit.xml``;
    what it printed and its exit code."""

    folder: Path
    stdout: str
    exit_code: int

    @property
    def run(self) -> Path:
        return (self.folder / "runs" / "latest").resolve()

    @property
    def reports(self) -> Path:
        return self.folder / "reports" / self.run.name

    @property
    def junit(self) -> Path:
        return self.folder / "junit.xml"


def make_run_command() -> list[str]:
    """The command the Makefile's ``run`` target runs (without an agent, a model or a key: the demo),
    as argv for this venv's ``coder-eval``."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    recipe = re.search(r"^run:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe, "the Makefile has no run target"
    line = next(line for line in recipe.group(1).splitlines() if "coder-eval run" in line)
    words = shlex.split(_without_make_ifs(line.strip()))
    assert words[0] == "$(VENV)/bin/coder-eval", line
    return [str(Path(sys.executable).parent / "coder-eval"), *words[1:]]


def _without_make_ifs(text: str) -> str:
    """``text`` with each ``$(if ...)`` left out (the demo sets none of their variables)."""
    while (start := text.find("$(if ")) >= 0:
        depth, end = 0, start
        for end in range(start, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0 and end > start + 1:
                break
        text = text[:start] + text[end + 1 :]
    return text


def run_demo(folder: Path) -> DemoRun:
    """``make run``'s command, with a JUnit file, from ``folder`` (the repository's tasks and
    experiments copied in), with neither a key nor a coder_eval setting from this environment."""
    for name in ("tasks", "experiments"):
        shutil.copytree(REPO / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CODER_EVAL_"))}
    env |= {"COLUMNS": "200", "NO_COLOR": "1"}
    command = [*make_run_command(), "--junit-xml", str(folder / "junit.xml")]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=3000)
    assert (folder / "runs" / "latest" / "run.json").is_file(), done.stdout + done.stderr
    return DemoRun(folder, done.stdout, done.returncode)


def _rate(frame: pd.DataFrame, arm: str) -> str:
    row = ca.summarize(frame[frame.variant_id == arm]).iloc[0]
    return f"{row['mean']:.2f} [{row.ci_low:.2f}, {row.ci_high:.2f}]"


def _mean(frame: pd.DataFrame, arm: str, metric: str, digits: int) -> str:
    return f"{ca.summarize(frame[frame.variant_id == arm], metric).iloc[0]['mean']:.{digits}f}"


def _comparison(v: Verdicts, metric: str) -> str:
    """As the reports word it: the effect the verdict rests on, the verdict's interval, test, p, MDE."""
    c = v.of(metric)
    p = p_value_text(c.p_value)
    p = p if p.startswith("<") else f"= {p}"
    effect = f"{effect_text(c)}, 95 % CI {interval_text(c)}"
    if c.basis == "ratio":  # the test is on log ratios: the ratio and its interval say it
        effect += f" (difference of means {c.diff:+.3g}, descriptive)"
    return f"{effect}, {c.test} p {p}: **{verdict_text(c)}**, MDE {mde_text(c)}"


def _missing(value: float | None) -> bool:
    return value is None or value != value  # NaN


def _row(label: str, *cells: str) -> str:
    return f"| {label} | {' | '.join(cells)} |"


def figures(run: Path, exit_code: int) -> str:
    """The section's Markdown, from the run's trajectories and manifest."""
    runs = ca.load_runs(run)
    episodes = runs.episodes
    v = verdicts(runs)
    graded = v.selection.episodes
    by_tag = {tag: graded[graded.tags.map(lambda tags, t=tag: t in tags)] for tag in ("api", "docs")}
    counts = episodes.groupby("variant_id").outcome.value_counts().unstack(fill_value=0)
    lines = [
        BEGIN,
        "",
        f"{len(episodes)} episodes: "
        + "; ".join(f"{arm} {', '.join(f'{n} {o}' for o, n in counts.loc[arm].items())}" for arm in ARMS)
        + ".",
        "",
        f"The {graded.task_id.nunique()} graded tasks (mean of task means, 95 % interval and method as in",
        "the reports):",
        "",
        "| | baseline | with_skill |",
        "|---|---|---|",
        _row(f"pass rate, all {graded.task_id.nunique()}", *(_rate(graded, arm) for arm in ARMS)),
    ]
    for tag, label in (("api", "API"), ("docs", "docs")):
        n = by_tag[tag].task_id.nunique()
        row = [_mean(by_tag[tag], arm, "passed", 2) for arm in ARMS]
        lines.append(f"| pass rate, {n} {label} tasks | {row[0]} | {row[1]} |")
    lines += [
        _row("turns per episode", *(_mean(graded, arm, "num_turns", 1) for arm in ARMS)),
        "",
        f"Cost: ${episodes['cost_usd'].sum():.2f} (a scripted model has no price).",
        "",
        f"Paired on the {v.primary.n_tasks if v.primary else 0} graded tasks, with_skill against baseline "
        "(the verdict's interval is its test inverted):",
        "",
        f"- pass rate: {_comparison(v, 'passed')};",
        f"- score: {_comparison(v, 'score')};",
        f"- turns: {_comparison(v, 'num_turns')}.",
        "",
        "The line `coder-eval run` prints at the end, as every surface states it:",
        "",
        f'```text norun="printed by coder-eval run"\nheadline: {v.line()}\n```',
        "",
        "The gates (`suite_thresholds` of the trigger dataset), as `coder-eval run` prints them:",
        "",
        "| variant | metric | value | 95 % CI | min | result |",
        "|---|---|---|---|---|---|",
    ]
    for gate in json.loads((run / "run.json").read_text(encoding="utf-8")).get("gates") or []:
        value = "n/a" if _missing(gate["value"]) else f"{gate['value']:.2f}"
        ci = "" if _missing(gate["ci_low"]) else f"{gate['ci_low']:.2f}–{gate['ci_high']:.2f}"
        label = f" ({gate['label']})" if gate["label"] else ""
        threshold = f"{gate['threshold']:.2f}"
        lines.append(
            _row(gate["variant_id"], f"{gate['metric']}{label}", value, ci, threshold, gate["verdict"])
        )
    lines += [
        "",
        f"`coder-eval run --experiment experiments/skills_ab.yaml -j 4` exits with code **{exit_code}**.",
        "",
        END,
    ]
    return "\n".join(lines)


def section(text: str) -> str:
    """The figures section of a docs/demo.md text, markers included."""
    match = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.DOTALL)
    assert match, f"docs/demo.md has no {BEGIN!r} ... {END!r} section"
    return match.group(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite docs/demo.md (else print)")
    with tempfile.TemporaryDirectory() as folder:
        demo = run_demo(Path(folder))
        text = figures(demo.run, demo.exit_code)
    if parser.parse_args().write:
        doc = DOC.read_text(encoding="utf-8")
        DOC.write_text(doc.replace(section(doc), text), encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
