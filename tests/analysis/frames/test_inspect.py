"""Inspect AI eval logs through ``load_runs``: the same frames as coder_eval runs, every statistic and
report on top. The logs are real: Inspect's own ``eval`` with its mock model (``inspect_eval``)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import coder_eval.analysis as ca
from coder_eval.analysis.answer.engine import REPORT_METRICS
from coder_eval.analysis.views.notebook import jsonable
from coder_eval.errors import AnalysisError
from coder_eval.run.render import render_report
from coder_eval.run_dir import episode_id
from tests.helpers import REPO
from tests.interop.inspect_eval import EPOCHS, HASTY_ERROR, MESSAGE_LIMIT, MODELS, SAMPLES, USAGE

SKILL_AB = REPO / "tests" / "fixtures" / "runs" / "skill-ab"
FRAMES = ("episodes", "criteria", "tool_calls", "messages")
CALL_TOKENS = sum(USAGE.values())
"""Tokens of one mock model call, all four buckets."""
CAREFUL, HASTY, LOOPER = MODELS

pytestmark = pytest.mark.slow  # the session fixture runs a real Inspect eval (about 10 s, once)


@pytest.fixture(scope="module")
def runs(inspect_logs: dict[str, Path]) -> ca.Runs:
    return ca.load_runs(list(inspect_logs.values()))


def episode(runs: ca.Runs, model: str, sample: int, epoch: int = 1) -> pd.Series:
    ep = runs.episodes.set_index("episode_id")
    return ep.loc[episode_id(f"arith/{sample}", model, epoch - 1)]


@pytest.mark.filterwarnings("ignore:1 trajectories are incomplete")
def test_frames_have_the_columns_and_dtypes_of_coder_eval_runs(runs: ca.Runs) -> None:
    own = ca.load_runs(SKILL_AB)
    for name in FRAMES:
        assert getattr(runs, name).dtypes.to_dict() == getattr(own, name).dtypes.to_dict(), name


def test_a_sample_is_a_task_an_epoch_a_repeat_and_the_model_the_variant(runs: ca.Runs) -> None:
    ep = runs.episodes
    assert len(ep) == len(SAMPLES) * EPOCHS * len(MODELS)
    assert sorted(ep.task_id.unique()) == [f"arith/{i}" for i in SAMPLES]
    assert sorted(ep.repeat.unique()) == list(range(EPOCHS))
    assert sorted(ep.variant_id.unique()) == sorted(MODELS)
    assert list(ep.episode_id) == [
        episode_id(*key) for key in zip(ep.task_id, ep.variant_id, ep.repeat, strict=True)
    ]
    assert ep.run_id.nunique() == 1  # one Inspect eval() is one run
    assert set(ep.model) == set(MODELS) and set(ep.agent) == {"use_tools+generate"}
    assert ep.scripted.all() and ep.tags.map(len).eq(0).all()
    assert episode(runs, CAREFUL, 2)["prompt"] == "What is 2 + 5?"


def test_scores_give_outcomes_and_a_sample_error_an_invalid_episode(runs: ca.Runs) -> None:
    outcomes = runs.episodes.groupby(["variant_id", "task_id"]).outcome.agg(
        lambda s: "/".join(sorted(set(s)))
    )
    assert outcomes[CAREFUL].tolist() == ["pass"] * 4
    assert outcomes[HASTY].tolist() == ["pass", "pass", "fail", "invalid"]
    assert outcomes[LOOPER].tolist() == ["fail"] * 4
    broken = episode(runs, HASTY, 4, epoch=2)
    assert (broken["status"], broken["score"] != broken["score"]) == ("agent_error", True)
    assert broken["passed"] is pd.NA and HASTY_ERROR in broken["error"]


def test_a_message_limit_is_a_max_turns_status(runs: ca.Runs) -> None:
    stopped = episode(runs, LOOPER, 1)
    assert (stopped["outcome"], stopped["status"]) == ("fail", "max_turns")
    assert f"message limit {MESSAGE_LIMIT} reached" in stopped["error"]
    assert pd.isna(episode(runs, CAREFUL, 1)["error"])


def test_tokens_turns_tool_calls_and_time_come_from_each_sample(runs: ca.Runs) -> None:
    calls = {CAREFUL: 2, HASTY: 1, LOOPER: 3}  # model calls per sample
    for model, n in calls.items():
        row = episode(runs, model, 1)
        assert row["input_tokens"] == n * USAGE["input_tokens"]
        assert row["output_tokens"] == n * USAGE["output_tokens"]
        assert row["cache_read_tokens"] == n * USAGE["input_tokens_cache_read"]
        assert row["cache_creation_tokens"] == n * USAGE["input_tokens_cache_write"]
        assert (row["total_tokens"], row["num_turns"]) == (n * CALL_TOKENS, n)
        assert row["n_tool_calls"] == {CAREFUL: 1, HASTY: 0, LOOPER: 3}[model]
        assert 0 < row["agent_s"] <= row["duration_s"]
    assert runs.episodes.cost_usd.isna().all()  # the mock model has no price
    assert episode(runs, HASTY, 4)["total_tokens"] == 0


def test_criteria_are_the_scores_with_their_answers(runs: ca.Runs) -> None:
    crit = runs.criteria.set_index("episode_id")
    assert len(crit) == len(runs.episodes) - EPOCHS  # the errored samples were never scored
    row = crit.loc[episode_id("arith/3", HASTY, 0)]
    assert (row["criterion_id"], row["kind"], row["score"], bool(row["passed"])) == (
        "match",
        "match",
        0.0,
        False,
    )
    assert row["details"]["value"] == "I" and row["details"]["answer"] == "8"
    assert crit.loc[episode_id("arith/3", CAREFUL, 0), "details"]["value"] == "C"


def test_tool_calls_are_joined_to_their_results(runs: ca.Runs) -> None:
    calls = runs.tool_calls
    careful = calls[calls.episode_id == episode_id("arith/2", CAREFUL, 0)].iloc[0]
    assert (careful["name"], careful["input_summary"], careful["order"]) == ("add", '{"x": 2, "y": 5}', 0)
    assert not careful["is_error"]  # NA would raise here: a result was recorded
    assert careful["duration_s"] >= 0 and careful["id"]
    looper = calls[calls.episode_id == episode_id("arith/1", LOOPER, 0)]
    assert looper.order.tolist() == [0, 1, 2] and looper.parent_tool_use_id.isna().all()


def test_messages_carry_the_usage_of_the_model_call_that_wrote_them(runs: ca.Runs) -> None:
    msgs = runs.messages[runs.messages.episode_id == episode_id("arith/1", CAREFUL, 0)]
    assert msgs.role.tolist() == ["user", "assistant", "assistant"]  # tool messages are tool results
    assert msgs.n_blocks.tolist() == [1, 2, 1] and msgs.text.iloc[-1] == "3"
    assistant = msgs[msgs.role == "assistant"].iloc[0]
    assert (assistant["input_tokens"], assistant["output_tokens"]) == (100, 10)
    assert (assistant["cache_read_tokens"], assistant["cache_creation_tokens"]) == (40, 5)
    assert msgs.iloc[0][["input_tokens", "output_tokens"]].isna().all()


def test_compare_pairs_the_models_on_samples(runs: ca.Runs) -> None:
    c = ca.compare(runs.episodes, CAREFUL, HASTY)
    assert (c.n_tasks, c.n_repeats, c.n_excluded_tasks) == (3, EPOCHS, 1)
    assert (c.mean_a, c.mean_b) == (1.0, pytest.approx(2 / 3))
    tokens = ca.compare(runs.episodes, CAREFUL, HASTY, "total_tokens")
    assert (tokens.diff, tokens.ratio) == (CALL_TOKENS, 2.0)


def test_a_json_log_loads_like_the_eval_log(inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    source = inspect_logs[LOOPER]
    target = tmp_path / "looper.json"
    write_eval_log(read_eval_log(str(source)), str(target), format="json")
    from_eval, from_json = ca.load_runs(source), ca.load_runs(target)
    assert set(from_json.episodes.path) == {str(target)}
    for name in FRAMES:
        a, b = (getattr(r, name).drop(columns=["path"], errors="ignore") for r in (from_eval, from_json))
        pd.testing.assert_frame_equal(a, b)


def test_a_folder_loads_every_log_and_skips_inspects_listing(
    inspect_logs: dict[str, Path], tmp_path: Path
) -> None:
    from inspect_ai.log import write_log_dir_manifest

    for path in inspect_logs.values():
        shutil.copy(path, tmp_path / path.name)
    write_log_dir_manifest(str(tmp_path))
    assert (tmp_path / "logs.json").is_file()
    assert len(ca.load_runs(tmp_path).episodes) == len(SAMPLES) * EPOCHS * len(MODELS)


@pytest.mark.parametrize(
    ("variant", "variant_id", "task_id"),
    [
        ("solver", "use_tools+generate", "arith/1"),
        ("model+solver", "mockllm/careful+use_tools+generate", "arith/1"),
        ("task", "arith", "1"),
    ],
)
def test_the_variant_can_be_the_solver_or_the_task(
    inspect_logs: dict[str, Path], variant: Any, variant_id: str, task_id: str
) -> None:
    ep = ca.load_runs(inspect_logs[CAREFUL], inspect_variant=variant).episodes
    assert set(ep.variant_id) == {variant_id} and ep.task_id.iloc[0] == task_id


def test_an_unknown_variant_is_refused_with_a_suggestion(inspect_logs: dict[str, Path]) -> None:
    with pytest.raises(AnalysisError, match=r"unknown inspect_variant 'modle' \(did you mean 'model'\?\)"):
        ca.load_runs(inspect_logs[CAREFUL], inspect_variant="modle")  # type: ignore[arg-type]


def test_without_inspect_ai_the_error_says_what_to_install(
    inspect_logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    for target in (inspect_logs[CAREFUL], inspect_logs[CAREFUL].parent):
        wanted = r"needs inspect_ai: pip install 'coder-eval-toolkit\[inspect\]'"
        with pytest.raises(AnalysisError, match=wanted):
            ca.load_runs(target)


def test_an_unfinished_log_loads_its_samples_with_a_warning(
    inspect_logs: dict[str, Path], tmp_path: Path
) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(inspect_logs[CAREFUL]))
    log.status = "cancelled"
    write_eval_log(log, str(tmp_path / "cancelled.eval"))
    with pytest.warns(UserWarning, match=r"status 'cancelled'; its 8 recorded samples are loaded"):
        assert len(ca.load_runs(tmp_path / "cancelled.eval").episodes) == 8


def same(value: Any) -> Any:
    """What a value looks like after the report summary's JSON round trip."""
    return json.loads(json.dumps(jsonable(value)))


def test_compare_report_renders_on_inspect_logs(inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    logs = [inspect_logs[HASTY], inspect_logs[CAREFUL]]
    params = {"baseline": HASTY, "candidate": CAREFUL}
    result = render_report(logs, "compare_report", params, out_dir=tmp_path)
    assert result.ok, result.error
    summary = json.loads(result.summary_path.read_text(encoding="utf-8"))
    runs = ca.load_runs(logs)
    v = ca.verdicts(runs, ca.Declaration(HASTY, CAREFUL))
    assert summary["comparisons"] == same(v.frame()) and summary["verdict"] == same(v.headline())
    assert [row["metric"] for row in summary["comparisons"]] == list(REPORT_METRICS)
    assert summary["mde"] == same(
        ca.mde(runs.episodes, CAREFUL, HASTY, "passed")
    )  # NaN below MIN_TASKS: null
    page = result.html_path.read_text(encoding="utf-8")
    assert "What is compared" in page and "2 invalid episodes excluded" in page
