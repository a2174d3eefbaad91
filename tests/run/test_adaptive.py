"""``--until-conclusive`` from Python: the order recorded before the first result, the stop at the
decision, the A/A twin, -j and resume keeping the decision, invalid episodes run again, budgets."""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path

import pytest

from coder_eval.episode.plan import EpisodePlan
from coder_eval.errors import InputError
from coder_eval.manifest import AdaptiveRecord, UntilConclusiveRule
from coder_eval.run import Batch, Quiet, RunInputs, RunSession
from coder_eval.run.adaptive import ATTEMPTS, execute_until_conclusive, start
from coder_eval.run_dir import RunDir
from coder_eval.trajectory import EpisodeEnd
from tests.helpers import REPO

AB, AA = REPO / "experiments" / "coin_ab.yaml", REPO / "experiments" / "coin_aa.yaml"
RULE = UntilConclusiveRule(delta=0.2, seed=0)


def until_conclusive(
    run_dir: Path, experiment: Path = AB, rule: UntilConclusiveRule = RULE, jobs: int = 1
) -> AdaptiveRecord:
    with RunSession.create(RunInputs(experiment=str(experiment)), run_dir) as session:
        start(session, rule)
        return execute_until_conclusive(session, Batch(jobs=jobs))


def finished(run_dir: Path) -> dict[str, EpisodeEnd]:
    return RunDir.open(run_dir).finished_episodes()


class OrderSeen(Quiet):
    """Reads run.json when the first episode ends: the order must already be there."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.order_at_first: list[str] | None = None

    def episode_done(self, plan: EpisodePlan, end: EpisodeEnd) -> None:
        if self.order_at_first is None:
            recorded = json.loads((self.run_dir / "run.json").read_text())["adaptive"]
            self.order_at_first = recorded["order"]


def test_a_clear_effect_is_called_better_on_fewer_episodes_than_the_fixed_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "ab"
    seen = OrderSeen(run_dir)
    with RunSession.create(RunInputs(experiment=str(AB)), run_dir) as session:
        record = start(session, RULE)
        final = execute_until_conclusive(session, Batch(jobs=1), seen)

    assert seen.order_at_first == record.order and sorted(record.order) == sorted(session.manifest.tasks)
    assert final.decision == "better" and final.stop == "decided"
    assert final.reason.startswith(
        f"with_skill better than baseline after {final.decided_tasks} of at most 60"
    )
    assert len(finished(run_dir)) == 2 * final.decided_tasks < 120 / 2  # the fixed run: 60 tasks x 2 arms
    looks = final.paths[0].looks
    assert [look.task_id for look in looks] == record.order[: final.decided_tasks]
    assert looks[-1].low > 0 and all(a.high >= b.high for a, b in itertools.pairwise(looks))
    assert json.loads((run_dir / "run.json").read_text())["adaptive"]["decision"] == "better"
    docs = (REPO / "docs" / "experiments.md").read_text()
    assert f"until conclusive: {final.reason}" in docs and f"{2 * final.decided_tasks} episodes where" in docs


def test_the_a_a_twin_calls_no_difference(tmp_path: Path) -> None:
    record = until_conclusive(tmp_path / "aa", AA)

    assert record.decision in ("inconclusive", "no_effect")
    assert record.stop in ("all_tasks", "decided") and "excludes 0" not in record.reason
    looks = record.paths[0].looks
    interval = f"[{looks[-1].low:+.2f}, {looks[-1].high:+.2f}]"
    said = f"runs\nall {len(looks)} tasks and ends {record.decision}, interval {interval}"
    assert said in (REPO / "docs" / "experiments.md").read_text()


def test_parallel_episodes_decide_in_the_recorded_order(tmp_path: Path) -> None:
    one = until_conclusive(tmp_path / "j1")
    four = until_conclusive(tmp_path / "j4", jobs=4)

    assert (four.decision, four.stopped_at, four.decided_tasks) == (
        one.decision,
        one.stopped_at,
        one.decided_tasks,
    )
    assert four.paths == one.paths
    ran = {end.task_id for end in _starts(tmp_path / "j4")}
    assert set(four.order[: four.decided_tasks]) <= ran
    assert ran - set(four.order[: four.decided_tasks]) == set(four.in_flight)


def _starts(run_dir: Path) -> list[EpisodePlan]:
    from coder_eval.trajectory import read_trajectory

    return [read_trajectory(p).start for p in (run_dir / "episodes").glob("*.jsonl")]  # type: ignore[misc]


class StopAfter(Quiet):
    def __init__(self, count: int) -> None:
        self.count, self.ended = count, 0

    def episode_done(self, plan: EpisodePlan, end: EpisodeEnd) -> None:
        self.ended += 1
        if self.ended == self.count:
            raise KeyboardInterrupt


def test_resume_keeps_the_order_and_reaches_the_same_decision(tmp_path: Path) -> None:
    whole = until_conclusive(tmp_path / "whole")
    run_dir = tmp_path / "cut"
    with RunSession.create(RunInputs(experiment=str(AB)), run_dir) as session:
        order = start(session, RULE).order
        with pytest.raises(KeyboardInterrupt):
            execute_until_conclusive(session, Batch(jobs=1), StopAfter(7))

    with RunSession.reopen(run_dir) as session:
        session.resume()
        again = execute_until_conclusive(session, Batch(jobs=2))

    assert again.order == order
    assert (again.decision, again.stopped_at, again.paths) == (whole.decision, whole.stopped_at, whole.paths)
    assert session.batch is not None and session.batch.skipped_done >= 6


def test_budgets_in_tasks_and_episodes_end_it_inconclusive_and_say_so(tmp_path: Path) -> None:
    tasks = until_conclusive(tmp_path / "t", AA, RULE.model_copy(update={"max_tasks": 5}))
    episodes = until_conclusive(tmp_path / "e", AA, RULE.model_copy(update={"max_episodes": 7}))

    assert (tasks.decision, tasks.stop, tasks.decided_tasks) == ("inconclusive", "max_tasks", 5)
    assert "inconclusive after 5 of at most 5 tasks (the task cap)" in tasks.reason
    assert episodes.stop == "max_episodes" and len(finished(tmp_path / "e")) <= 7
    assert "the budget of 7 episodes" in episodes.reason


FLAKY = """
task_id: {task_id}
initial_prompt: write ok to ok.txt
pre_run: ["{pre_run}"]
agent:
  kind: command
  command: "{command}"
sandbox: {{driver: tempdir}}
success_criteria:
  - {{type: file_contains, path: ok.txt, includes: [ok]}}
"""
TWO_ARMS = """
experiment_id: flaky
variants:
  - {variant_id: baseline, agent: {env: {ARM: baseline}}}
  - {variant_id: with_skill, agent: {env: {ARM: with_skill}}}
"""
PASS = "echo ok > ok.txt"


def flaky_suite(folder: Path, command: str = PASS, pre_run: str = "true") -> RunInputs:
    """Three tasks whose set-up runs ``pre_run`` and whose agent runs ``command`` (``{mark}``: a host
    file unique to the episode's task; ``$ARM``: the variant)."""
    (folder / "tasks").mkdir()
    for i in range(3):
        mark = folder / f"mark-t{i}"
        text = FLAKY.format(
            task_id=f"t{i}", command=command.format(mark=mark), pre_run=pre_run.format(mark=mark)
        )
        (folder / "tasks" / f"t{i}.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    (folder / "ab.yaml").write_text(TWO_ARMS, encoding="utf-8")
    return RunInputs(paths=[str(folder / "tasks")], experiment=str(folder / "ab.yaml"))


def test_an_episode_the_harness_lost_is_run_again_and_its_task_counts(tmp_path: Path) -> None:
    # the first set-up of each task fails (a harness error: invalid_cause harness); later ones work
    inputs = flaky_suite(tmp_path, pre_run="if [ -e {mark} ]; then true; else touch {mark}; exit 3; fi")
    with RunSession.create(inputs, tmp_path / "run") as session:
        start(session, RULE)
        record = execute_until_conclusive(session, Batch())

    assert record.decided_tasks == 3 and record.stop == "all_tasks"
    assert all(end.outcome == "pass" for end in finished(tmp_path / "run").values())
    assert len(list((tmp_path / "run" / "partial").glob("*.jsonl"))) == 3  # the invalid ones, kept


def test_a_task_the_harness_keeps_losing_stops_the_run_and_is_never_dropped(tmp_path: Path) -> None:
    inputs = flaky_suite(tmp_path, pre_run="exit 3")
    with RunSession.create(inputs, tmp_path / "run") as session:
        record = start(session, RULE)
        final = execute_until_conclusive(session, Batch())

    assert (final.stop, final.blocked, final.decided_tasks) == ("blocked", record.order[0], 0)
    assert f"the harness lost task {record.order[0]}'s episodes {ATTEMPTS} times" in final.reason
    assert len(list((tmp_path / "run" / "partial").glob("*.jsonl"))) == 2 * (ATTEMPTS - 1)


def test_an_arms_own_failures_are_never_run_again_nor_block_the_run(tmp_path: Path) -> None:
    """The candidate's agent dies on every episode: whether the record calls that invalid or a failure,
    it counts against the candidate, once, and the run is not blocked."""
    failing = "if [ $ARM = with_skill ]; then exit 3; fi; echo ok > ok.txt"
    with RunSession.create(flaky_suite(tmp_path, failing), tmp_path / "run") as session:
        start(session, RULE)
        record = execute_until_conclusive(session, Batch())

    ends = finished(tmp_path / "run")
    assert len(ends) == 6 and not (tmp_path / "run" / "partial").exists()
    assert {end.outcome for e, end in ends.items() if "with_skill" in e} <= {"fail", "invalid"}
    assert record.stop == "all_tasks" and record.decided_tasks == 3
    assert [look.value for look in record.paths[0].looks] == [-1.0, -1.0, -1.0]


def test_one_variant_cannot_be_compared(tmp_path: Path) -> None:
    task = REPO / "tasks" / "examples" / "write_file.yaml"
    inputs = RunInputs(paths=[str(task)], driver="tempdir")
    with (
        RunSession.create(inputs, tmp_path / "one") as session,
        pytest.raises(InputError, match="two variants"),
    ):
        start(session, RULE)


def test_a_run_without_a_rule_is_refused(tmp_path: Path) -> None:
    inputs = RunInputs(experiment=str(AB))
    with (
        RunSession.create(inputs, tmp_path / "plain") as session,
        pytest.raises(InputError, match="no rule in"),
    ):
        execute_until_conclusive(session)


def test_the_dask_executor_reaches_the_same_decision_in_the_same_order(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from coder_eval.run import Placement

    local = until_conclusive(tmp_path / "local")
    with RunSession.create(RunInputs(experiment=str(AB)), tmp_path / "dask") as session:
        start(session, RULE)
        dask = execute_until_conclusive(session, Batch(jobs=2, placement=Placement("dask")))

    assert (dask.decision, dask.stopped_at, dask.paths) == (local.decision, local.stopped_at, local.paths)
