"""Simulated users: the simulator on its own, task validation, and dialogs with the real Claude Code CLI."""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from coder_eval.agents.base import AgentReply
from coder_eval.analysis import load_runs
from coder_eval.episode.plan import EpisodePlan, plan_episodes
from coder_eval.episode.runner import run_episode
from coder_eval.episode.simulator import open_simulation, system_prompt
from coder_eval.errors import AgentError, TaskError
from coder_eval.run.batch import run_batch
from coder_eval.run_dir import RunDir, RunManifest
from coder_eval.scripted import ScriptedServer
from coder_eval.task import load_tasks
from coder_eval.task.simulation import SimulationSpec
from coder_eval.trajectory import CriterionResult, EpisodeEnd, Message, Usage, read_trajectory
from tests.helpers import REPO, minimal_task, write_task

TEXT = "{{blocks: [{{text: {!r}}}]}}"
WRITE_OK = "{blocks: [{tool_use: {name: Bash, input: {command: 'echo ok > ok.txt'}}}]}"
OK_CRITERION = "- {id: ok, type: file_contains, path: ok.txt, includes: [ok]}"


def dialog_task(
    folder: Path, agent: list[str], user: list[str], simulation: str = "", criteria: str = OK_CRITERION
) -> Path:
    """A claude-code task with a scripted agent and user; turns and ``simulation`` fields in YAML flow."""
    body = f"""
        task_id: dialog
        initial_prompt: Start the job.
        agent: {{kind: claude-code, model: scripted, permission_mode: bypassPermissions}}
        scripted: {{model: claude-sonnet-4-5, final_text: Done., turns: [{", ".join(agent)}]}}
        simulation: {{goal: the job is done, model: scripted, {simulation}
          scripted: {{model: claude-haiku-4-5, final_text: "still there?", turns: [{", ".join(user)}]}}}}
        success_criteria:
          {criteria}
        """
    return write_task(folder, body)


def run(path: Path, tmp_path: Path) -> tuple[EpisodeEnd, list[Any]]:
    out = tmp_path / "episode.jsonl"
    end = asyncio.run(run_episode(EpisodePlan(load_tasks([path])[0]), "run-1", out))
    return end, read_trajectory(out).events


def _dialog_note(event: Any) -> bool:
    return isinstance(event, Message) and event.content[0].get("type") in {"criteria_check", "dialog_end"}


def shape(events: list[Any]) -> list[str]:
    """The dialog as words: user / sim / assistant / tool / check / end:<reason> / criterion."""
    words = []
    for e in events:
        if isinstance(e, Message) and e.role == "system" and _dialog_note(e):
            block = e.content[0]
            words.append("check" if block["type"] == "criteria_check" else f"end:{block['reason']}")
        elif isinstance(e, Message) and e.role != "system":
            words.append("sim" if e.simulated else e.role)
        elif isinstance(e, CriterionResult):
            words.append("criterion")
    return words


class Sink:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def write(self, event: Any) -> None:
        self.events.append(event)


def spec(**fields: Any) -> SimulationSpec:
    base: dict[str, Any] = {"goal": "get a haiku", "model": "scripted", "scripted": {"turns": []}}
    return SimulationSpec.model_validate({**base, **fields})


# -- the simulator on its own ---------------------------------------------------------------------


def test_the_system_prompt_carries_persona_goal_constraints_and_the_stop_rule() -> None:
    prompt = system_prompt(spec(persona="a poet", constraints=["be brief"], stop_token="<END>"), "Hi!")
    assert all(part in prompt for part in ["a poet", "get a haiku", "- be brief", "<END>", "Hi!"])


def test_the_simulator_sees_agent_replies_as_user_turns_and_records_its_own(tmp_path: Path) -> None:
    turns = [{"blocks": [{"text": "Shorter."}]}, {"blocks": [{"text": "Good. <<<END>>>"}]}]
    sink = Sink()
    with ExitStack() as stack:
        simulator = open_simulation(
            spec(scripted={"model": "claude-haiku-4-5", "turns": turns}),
            "Write a poem.",
            task_dir=tmp_path,
            seed=1,
            stack=stack,
            check=None,
        )
        first = asyncio.run(simulator.next_message(AgentReply(1, "A long poem."), sink))
        second = asyncio.run(simulator.next_message(AgentReply(2, "A haiku."), sink))
    assert (first, second) == ("Shorter.", None)
    assert [m["role"] for m in simulator.history] == ["user", "assistant", "user", "assistant"]
    said = [e for e in sink.events if e.simulated]
    assert [e.content[0]["text"] for e in said] == ["Shorter.", "Good. <<<END>>>"]
    assert all(e.role == "user" and e.model == "claude-haiku-4-5" and e.usage.total > 0 for e in said)
    assert sink.events[-1].content == [{"type": "dialog_end", "reason": "stop_token", "user_turns": 1}]


def test_a_real_simulator_model_needs_an_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    real = SimulationSpec(goal="g", model="claude-sonnet-4-5")
    with ExitStack() as stack, pytest.raises(AgentError, match="needs ANTHROPIC_API_KEY"):
        open_simulation(real, "hi", task_dir=tmp_path, seed=0, stack=stack, check=None)


# -- validation at load time ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("simulation", "agent", "message"),
    [
        ("{goal: g, model: scripted}", "claude-code", "model is 'scripted' but there is no 'scripted' block"),
        ("{goal: g, scripted: {turns: []}}", "claude-code", "needs model: scripted"),
        ("{goal: g, check_criteria: sometimes}", "claude-code", "end_of_dialog"),
        ("{goal: g, max_turn: 3}", "claude-code", "did you mean 'max_turns'"),
        ("{goal: g, max_turns: 0}", "claude-code", "max_turns"),
        ("{goal: g, model: scripted, scripted: {turns: [{blokcs: []}]}}", "claude-code", "blokcs"),
        (
            "{goal: g, model: scripted, scripted: missing.yaml}",
            "claude-code",
            "file 'missing.yaml' not found",
        ),
        ("{goal: g}", "command, command: 'true'", "kinds that can: claude-code"),
        ("{persona: p}", "claude-code", "goal"),
    ],
)
def test_bad_simulation_blocks_fail_at_load_time(
    tmp_path: Path, simulation: str, agent: str, message: str
) -> None:
    body = f"""
        task_id: t
        initial_prompt: hi
        agent: {{kind: {agent}}}
        simulation: {simulation}
        success_criteria: [{{type: file_exists, path: x}}]
        """
    with pytest.raises(TaskError, match=message) as caught:
        load_tasks([write_task(tmp_path, body)])
    assert "task.yaml" in str(caught.value)


@pytest.mark.parametrize(("kind", "outcome"), [("oracle", "pass"), ("none", "fail")])
def test_grader_check_agents_ignore_the_simulation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, outcome: str
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    path = minimal_task(
        tmp_path, extra=f"agent: {{kind: {kind}}}\nsimulation: {{goal: g, model: claude-x}}\n"
    )
    end = asyncio.run(run_episode(EpisodePlan(load_tasks([path])[0]), "run-1", tmp_path / "e.jsonl"))
    assert end.outcome == outcome


def test_the_example_dialog_task_loads() -> None:
    task = load_tasks([REPO / "tasks" / "dialog" / "clarify.yaml"])[0]
    assert task.simulation is not None and task.simulation.model == "scripted"


# -- dialogs with the real Claude Code CLI --------------------------------------------------------


@pytest.mark.slow
def test_a_three_turn_dialog_keeps_the_agent_session(tmp_path: Path, servers: list[ScriptedServer]) -> None:
    agent = [TEXT.format("Reply one."), TEXT.format("Reply two."), WRITE_OK, TEXT.format("Reply three.")]
    user = [TEXT.format("Message one."), TEXT.format("Message two."), TEXT.format("Bye <<<END>>>")]
    end, events = run(dialog_task(tmp_path, agent, user), tmp_path)
    assert (end.outcome, end.status) == ("pass", "completed")
    assert shape(events) == [
        *["user", "assistant", "sim", "assistant", "sim", "assistant", "assistant", "sim"],
        *["end:stop_token", "criterion"],
    ]
    users = [e for e in events if isinstance(e, Message) and e.role == "user"]
    assert [u.simulated for u in users] == [False, True, True, True]
    agent_server = next(s for s in servers if s.script.model == "claude-sonnet-4-5")
    third = json.dumps(next(r.body for r in agent_server.requests if r.turn == 2))  # answered by Bash
    assert all(text in third for text in ["Start the job.", "Reply one.", "Message one.", "Message two."])
    assistant = [e for e in events if isinstance(e, Message) and e.role == "assistant"]
    assert end.usage == sum((m.usage or Usage() for m in assistant), Usage())
    assert end.num_turns == 4


@pytest.mark.slow
def test_the_turn_cap_ends_a_dialog_the_simulator_would_go_on_with(tmp_path: Path) -> None:
    agent = [WRITE_OK, TEXT.format("One."), TEXT.format("Two."), TEXT.format("Three.")]
    end, events = run(dialog_task(tmp_path, agent, [], simulation="max_turns: 2,"), tmp_path)
    assert end.outcome == "pass"
    assert shape(events) == [
        *["user", "assistant", "assistant", "sim", "assistant", "sim", "assistant"],
        *["end:max_turns", "criterion"],
    ]


@pytest.mark.slow
def test_stop_when_criteria_pass_ends_the_dialog_early(tmp_path: Path) -> None:
    agent = [TEXT.format("Which file?"), WRITE_OK, TEXT.format("Written.")]
    simulation = "stop_on_criteria_pass: true,"  # the original's name; it checks after each reply
    end, events = run(dialog_task(tmp_path, agent, [TEXT.format("ok.txt")], simulation), tmp_path)
    assert end.outcome == "pass"
    assert shape(events) == [
        *["user", "assistant", "check", "sim", "assistant", "assistant", "check"],
        *["end:criteria_passed", "criterion"],
    ]


@pytest.mark.slow
def test_every_turn_checks_are_recorded_beside_one_final_grading(tmp_path: Path) -> None:
    agent = [TEXT.format("Which file?"), WRITE_OK, TEXT.format("Written.")]
    user = [TEXT.format("ok.txt"), TEXT.format("<<<END>>>")]
    path = dialog_task(tmp_path, agent, user, simulation="check_criteria: every_turn,")
    end, events = run(path, tmp_path)
    checks = [e.content[0] for e in events if isinstance(e, Message) and _dialog_note(e)][:-1]
    assert [(c["turn"], c["gating_passed"]) for c in checks] == [(1, False), (2, True)]
    assert [r["criterion_id"] for r in checks[0]["results"]] == ["ok"]
    criteria = load_runs(tmp_path / "episode.jsonl").criteria
    assert (len(criteria), end.outcome) == (1, "pass")


@pytest.mark.slow
def test_a_failing_simulator_makes_the_episode_invalid(tmp_path: Path) -> None:
    agent = [TEXT.format("Hello?")]
    end, events = run(dialog_task(tmp_path, agent, ["{error: {kind: auth}}"]), tmp_path)
    assert (end.outcome, end.status) == ("invalid", "infra_error")
    assert end.error is not None and "user simulator" in end.error
    assert not any(isinstance(e, CriterionResult) for e in events)


# -- the original format's simulation fields ------------------------------------------------------


def test_the_original_defaults_and_spellings() -> None:
    spec = SimulationSpec.model_validate(
        {"goal": "g", "check_criteria": "both", "stop_on_criteria_pass": True}
    )

    assert (spec.max_turns, spec.stop_token) == (8, "<<<END>>>")
    assert (spec.check_criteria, spec.stop_when_criteria_pass, spec.checks_each_turn) == (
        "every_turn",
        True,
        True,
    )


def test_a_disabled_simulation_is_an_ordinary_task(tmp_path: Path) -> None:
    path = minimal_task(
        tmp_path, extra="agent: {kind: oracle}\nsimulation: {enabled: false, goal: g, n_trials: 4}\n"
    )

    (task,) = load_tasks([path])

    assert task.simulation is None and len(plan_episodes([task], repeats=2)) == 2


def test_n_trials_fan_out_like_repeats(tmp_path: Path) -> None:
    path = minimal_task(tmp_path, extra="agent: {kind: oracle}\nsimulation: {goal: g, n_trials: 3}\n")

    plans = plan_episodes(load_tasks([path]), repeats=2)

    assert sorted(p.repeat for p in plans) == [0, 1, 2, 3, 4, 5]
    assert len({p.episode_id for p in plans}) == 6


def test_trials_run_one_after_another_without_parallel_trials(tmp_path: Path) -> None:
    body = """
    task_id: trials
    initial_prompt: p
    agent: {kind: oracle}
    simulation: {goal: g, n_trials: 3, parallel_trials: false}
    reference_solution: sleep 0.4; touch done.txt
    success_criteria: [{type: file_exists, path: done.txt}]
    """
    plans = plan_episodes(load_tasks([write_task(tmp_path, body)]))
    run_dir = RunDir.create(tmp_path / "runs", RunManifest(run_id="trials"))

    asyncio.run(run_batch(plans, run_dir, run_id="trials", concurrency=3))

    spans = sorted(
        (start.ts, end.ts)
        for start, end in (
            (read_trajectory(p).start, read_trajectory(p).end) for p in run_dir.trajectory_paths()
        )
        if start is not None and end is not None
    )
    assert len(spans) == 3
    assert all(earlier[1] <= later[0] for earlier, later in pairwise(spans))


@pytest.mark.slow
def test_the_simulators_token_budget_ends_the_dialog(tmp_path: Path) -> None:
    agent = [TEXT.format("Reply one."), WRITE_OK, TEXT.format("Reply two.")]
    user = [TEXT.format("Message one."), TEXT.format("Message two.")]
    end, events = run(dialog_task(tmp_path, agent, user, simulation="max_total_tokens: 1,"), tmp_path)

    assert end.outcome == "pass"
    assert shape(events)[-2:] == ["end:max_total_tokens", "criterion"]
    assert sum(1 for e in events if isinstance(e, Message) and e.simulated) == 1
