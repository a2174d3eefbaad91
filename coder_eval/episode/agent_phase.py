"""The agent phase of an episode: the agent under its limits, with whoever talks to it between turns.

Example::

    result = await run_agent(task, stage, sink, Turn(episode_id, seed, grade))
    result.status         # completed, timeout, max_turns, budget_exceeded, stopped_early, ...

``Turn.grade`` grades the workspace as it is at that moment (a simulated user checking every turn,
``max_iterations`` feedback). The run limits every agent shares are kept by the watch (``watch.py``);
what an agent's own CLI reports is mapped by the agent itself.
"""

from __future__ import annotations

import re
from collections.abc import Coroutine, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from coder_eval.agents import AGENTS, AgentRequest, AgentResult, make_agent
from coder_eval.agents.raw_events import RawEventLog
from coder_eval.criteria import GradingContext
from coder_eval.criteria.transcript import message_text
from coder_eval.episode.iterations import Grade, GraderFeedback, armed_criteria, early_stop_check
from coder_eval.episode.simulator import Simulator, open_simulation
from coder_eval.episode.stage import Stage
from coder_eval.episode.watch import EarlyCheck, Watch, WatchOutcome
from coder_eval.errors import AgentError, CoderEvalError
from coder_eval.plugins import crash_text
from coder_eval.pricing import cost_usd
from coder_eval.sandbox.spec import Limits
from coder_eval.task import TaskSpec
from coder_eval.task.limits import RunLimits, token_overrun
from coder_eval.trajectory import Event, Message, Status, TrajectoryWriter, Usage


@dataclass(frozen=True)
class Turn:
    """What the agent phase needs of its episode: its id, its seed, and how to grade mid-run."""

    episode_id: str
    seed: int
    grade: Grade
    raw_events: RawEventLog | None = None
    """Where the agent writes its CLI's raw events, when the run keeps them."""


async def run_agent(task: TaskSpec, stage: Stage, sink: TrajectoryWriter, turn: Turn) -> AgentResult:
    """The agent under the task timeout and the watch's limits; a simulated user (a dialog task) or
    the graders' feedback (``max_iterations``) for the episode's lifetime."""
    with ExitStack() as stack:
        watch = Watch(sink, task.run_limits, _early_stop(task, stage))
        conversation = _simulated_user(task, turn, stack) or _feedback(task, turn)
        request = AgentRequest(
            prompt=task.prompt,
            spec=task.agent,
            limits=task.run_limits,
            sandbox=stage.sandbox,
            episode_id=turn.episode_id,
            seed=turn.seed,
            endpoint=stage.endpoint,
            conversation=conversation,
            reference_script=task.reference_script,
            task_dir=task.source_dir,
            plugins=stage.plugins,
            raw_events=turn.raw_events,
        )
        outcome = await watch.run(
            _named(task.agent.type, make_agent(task.agent.type).run(request, watch)),
            task.run_limits.task_timeout,
        )
    stage.notes += outcome.notes + _single_iteration(task)
    return _ended(task, sink, stage, outcome)  # budgets are weighed on the settled record (runner)


def _ended(task: TaskSpec, sink: TrajectoryWriter, stage: Stage, outcome: WatchOutcome) -> AgentResult:
    """The agent's result, or what its recorded messages say when a time limit or the watch ended it."""
    if outcome.timed_out:
        limit = f"task_timeout of {task.run_limits.task_timeout:g} s"
        return _provider_check(task, sink, stage, _stopped(task, sink, "timeout", f"{limit} reached"), limit)
    if outcome.stop is not None:
        result = _stopped(task, sink, outcome.stop.status, outcome.stop.reason)
        if outcome.stop.status != "timeout":
            return result
        return _provider_check(
            task, sink, stage, result, f"turn_timeout of {task.run_limits.turn_timeout:g} s"
        )
    assert outcome.result is not None
    return outcome.result


async def _named(kind: str, run: Coroutine[Any, Any, AgentResult]) -> AgentResult:
    """A plugin agent's crash as an ``AgentError`` naming it and the line that raised (the episode is
    invalid with that message); built-in agents' errors pass as they are."""
    try:
        return await run
    except Exception as exc:
        if kind in AGENTS or isinstance(exc, CoderEvalError):
            raise
        raise AgentError(crash_text(f"agent {kind}", exc)) from exc


RLIMIT_SIGNS = {
    "cpu time": re.compile(r"\bexited (?:152|-24)\b|CPU time limit exceeded"),
    "file size": re.compile(r"\bexited (?:153|-25)\b|File size limit exceeded"),
    "processes": re.compile(r"Resource temporarily unavailable|BlockingIOError|EAGAIN"),
}
"""How a crash caused by a limit enforced by an rlimit shows (no counter records it): the signal
(SIGXCPU, SIGXFSZ) as the exit status of a process or of the shell that ran it, or the error a
refused fork gives."""


def limits_hit(result: AgentResult, limits: Limits, counted: Sequence[str]) -> list[str]:
    """The sandbox limits the agent ran into: those its control group counted (``memory``,
    ``processes``), and, when the agent crashed, those whose rlimit its error shows (a limit the
    task set: ``cpu time`` for ``max_cpu_seconds``, ``file size`` for ``max_disk_mb``,
    ``processes`` for ``max_pids``)."""
    hits = list(counted)
    if not result.invalid and result.status == "agent_error":
        configured = {
            "cpu time": limits.max_cpu_seconds,
            "file size": limits.max_disk_mb,
            "processes": limits.max_pids,
        }
        error = result.error or ""
        hits += [
            n for n, sign in RLIMIT_SIGNS.items() if configured[n] and sign.search(error) and n not in hits
        ]
    return hits


def at_limit(result: AgentResult, limits: Limits, hits: Sequence[str]) -> AgentResult:
    """A limit of the sandbox stopped or refused one of the agent's processes: the agent's failure
    (status ``resource_limit``, outcome ``fail``), never a harness fault."""
    said = {
        "memory": f"a process was killed at the memory limit ({limits.max_memory_mb} MB)",
        "processes": f"a new process was refused at the process limit ({limits.max_pids})",
        "cpu time": f"a process was killed at the CPU-time limit ({limits.max_cpu_seconds} s)",
        "file size": f"a process was stopped writing past the file-size limit ({limits.max_disk_mb} MB)",
    }
    result.status, result.invalid, result.cause = "resource_limit", False, None
    result.error = "; ".join([*(said[h] for h in hits), *([result.error] if result.error else [])])
    return result


def _provider_check(
    task: TaskSpec, sink: TrajectoryWriter, stage: Stage, result: AgentResult, limit: str
) -> AgentResult:
    """A model agent cut off by a time limit while its model owed it a reply was not measured: the
    provider was unavailable. Never answered at all: ``infra_error``. Answered, then stopped
    answering: ``model_stalled``. Both ``invalid`` (``provider``); anything else stays the agent's
    ``timeout``.

    Only the harness's own vantage point counts: the scripted server says whether it was asked,
    whether it answered and whether it holds a request (a CLI that never asked spent the time itself:
    its ``timeout``); the API proxy in front of a real model says the same. Where the harness has no
    vantage point a stall cannot be told from a slow agent (the CLI's own stream is the agent's
    account), and the timeout stays the agent's."""
    if not task.agent.CAPABILITIES.talks_to_model or stage.model_answered is None:
        return result
    answered = stage.model_answered()
    if answered is None:  # the CLI never asked (still starting): the time was its own
        return result
    if not answered:
        result.status, result.invalid, result.cause = "infra_error", True, "provider"
        result.error = f"provider unavailable: the model did not answer once before the {limit} was reached"
    elif stage.model_stalled is not None and stage.model_stalled():
        result.status, result.invalid, result.cause = "model_stalled", True, "provider"
        result.error = (
            f"the model stopped answering mid-episode: a request was unanswered when the {limit} was reached"
        )
    return result


def _stopped(task: TaskSpec, sink: TrajectoryWriter, status: Status, reason: str) -> AgentResult:
    """The harness ended the agent's run: what its recorded messages say it used, and why it ended."""
    messages = [e for e in sink.events if isinstance(e, Message) and e.role == "assistant"]
    usage = sum((m.usage for m in messages if m.usage is not None), Usage())
    models = {m.model for m in messages if m.model}
    cost = cost_usd(models.pop(), usage) if len(models) == 1 and usage.total else None
    final = next((text for m in reversed(messages) if (text := message_text(m))), None)
    return AgentResult(
        status=status, error=reason, usage=usage, cost_usd=cost, num_turns=len(messages), final_message=final
    )


def _simulated_user(task: TaskSpec, turn: Turn, stack: ExitStack) -> Simulator | None:
    """The task's simulated user; with ``every_turn`` it checks the criteria after each agent reply."""
    spec = task.simulation
    if spec is None or not task.agent.CAPABILITIES.keeps_session:
        return None
    every_turn = spec.checks_each_turn
    return open_simulation(
        spec,
        task.prompt,
        task_dir=task.source_dir,
        seed=turn.seed,
        stack=stack,
        check=turn.grade if every_turn else None,
    )


def _feedback(task: TaskSpec, turn: Turn) -> GraderFeedback | None:
    """``max_iterations``: after a failed grading, the failures are the agent's next turn."""
    if task.max_iterations < 2 or not task.agent.CAPABILITIES.keeps_session:
        return None
    return GraderFeedback(turn.grade, task.max_iterations)


def _single_iteration(task: TaskSpec) -> list[str]:
    """The note of a ``max_iterations`` task run by the oracle or ``none``: one iteration, nothing to
    feed back (they make no model turn a failure could be the answer to)."""
    if task.max_iterations < 2 or not task.agent.CAPABILITIES.checks_graders:
        return []
    return [
        f"max_iterations {task.max_iterations}: the {task.agent.type} agent has nothing to feed the "
        "graders' failures back to, so one iteration ran"
    ]


def _early_stop(task: TaskSpec, stage: Stage) -> EarlyCheck | None:
    """The watch's check of the criteria armed with ``stop_early`` (the oracle and ``none`` are never
    stopped: they are grader checks)."""
    if task.agent.CAPABILITIES.checks_graders:
        return None

    def context(events: list[Event]) -> GradingContext:
        recorders = {r.name: r.log for r in task.sandbox.recorders}
        return GradingContext(
            stage.sandbox, events, task.source_dir, recorders=recorders, agent_paths=stage.paths
        )

    return early_stop_check(armed_criteria(task), context)


def apply_budgets(limits: RunLimits, result: AgentResult) -> AgentResult:
    """A completed run over a token or dollar budget is ``budget_exceeded`` (the agent's fail)."""
    if result.status != "completed" or result.invalid:
        return result
    over = token_overrun(limits, result.usage)
    if over is not None:
        result.status, result.error = "budget_exceeded", over
    elif limits.max_usd is not None and (result.cost_usd or 0) > limits.max_usd:
        result.status, result.error = "budget_exceeded", f"cost ${result.cost_usd:.4f} > max_usd"
    return result
