"""The stage: the agent's side of an episode, set up before the agent runs.

Example::

    async with AsyncExitStack() as stack:
        stage = await open_stage(plan.task, provider, sink, stack)
        stage.sandbox        # the agent's sandbox, seeded, pre_run done
        stage.endpoint       # the scripted model server, when the model is 'scripted'
        stage.prepared       # each criterion's state from before the agent ran (hashes, expected tests ...)
        stage.pytest_config  # the task's pytest configuration as it was before the agent ran

Around the sandbox: the recorder that answers and records recorded-CLI calls (written to the
trajectory as ``cli_call`` events); for a real model whose key the host holds, the harness's API
proxy (``coder_eval.endpoint.proxy``: the CLI gets a dummy key, the harness sends the real one and
records every exchange); otherwise, for ``network: model``, the proxy through which the agent
reaches its model and nothing else. ``stage.vantage`` is the harness's record of the model endpoint.
Everything is closed by ``stack``; a sandbox that cannot be removed is reported in
``stage.leftovers`` instead of failing the episode.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coder_eval.agents import ModelEndpoint, RealEndpoint, make_agent
from coder_eval.agents.base import OfferedPlugin, agent_host_paths
from coder_eval.endpoint.proxy import DUMMY_KEY, ApiProxy, Credential, upstream_verify
from coder_eval.episode.pristine import with_expected_tests
from coder_eval.episode.record import Vantage
from coder_eval.episode.skill_offer import offered_plugins, plugin_staging
from coder_eval.episode.verifier import reads_only
from coder_eval.errors import CoderEvalError, SandboxError, WorkspaceFileError
from coder_eval.sandbox import DriverSandbox, Provision, RecordingHost, ShimCall, make_sandbox
from coder_eval.sandbox.base import Sandbox
from coder_eval.sandbox.envs import sandbox_envs
from coder_eval.sandbox.network import ModelProxy, ModelRoute
from coder_eval.sandbox.provision import Shown
from coder_eval.sandbox.toolchain import PYTEST_CONFIGS, pytest_config
from coder_eval.task import ReferenceFolder, TaskSpec
from coder_eval.trajectory import CliCall, ModelCall, TrajectoryWriter

if TYPE_CHECKING:
    from coder_eval.scripted import ScriptedServer


@dataclass
class Stage:
    """The agent's sandbox and what was set up around it."""

    sandbox: DriverSandbox
    endpoint: ModelEndpoint | None
    prepared: list[Any]
    pytest_config: tuple[str, bytes] | None
    recorder: RecordingHost | None = None
    model_answered: Callable[[], bool | None] | None = None
    """Whether the model answered this attempt (None: it was never asked), as the scripted server or
    the API proxy saw it; None where the harness has no vantage point on a real model."""
    model_stalled: Callable[[], bool] | None = None
    """Whether the model owes a reply right now: the scripted server holds a request unanswered, or
    the API proxy (or, with no key on the host, the model proxy's tunnel) passed a request on and
    nothing came back since. None where it cannot be seen."""
    leftovers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plugins: tuple[OfferedPlugin, ...] = ()
    """What the agent is offered: staged host plugins and workspace ones (``skill_offer.py``)."""
    vantage: Vantage | None = None
    """The harness's point on the model endpoint (the scripted server, the API proxy); None: none."""

    @property
    def confined(self) -> bool:
        """The agent's sandbox is a boundary (``bwrap``, ``docker``; ``tempdir`` is not)."""
        return self.sandbox.driver in ("bwrap", "docker")

    @property
    def paths(self) -> dict[str, str]:
        """Where the agent ran, as it saw it (criteria translate paths in tool calls with it)."""
        return {
            "driver": self.sandbox.driver,
            "workdir": self.sandbox.workdir,
            "home": self.sandbox.env["HOME"],
        }


def real_base_url(route: RealEndpoint) -> str:
    """Where an agent's real model is reached (the host's variable for it, else the provider's API):
    under ``network: model`` the sandbox reaches that endpoint and nothing else."""
    return os.environ.get(route.variable) or route.default


async def open_stage(
    task: TaskSpec, provider: ScriptedProvider, sink: TrajectoryWriter, stack: AsyncExitStack
) -> Stage:
    """Set up the agent's sandbox for one episode attempt (see the module docstring)."""
    endpoint = provider.endpoint()
    route = None
    api = None
    if endpoint is not None:  # the scripted server, whatever the agent kind (a command agent too)
        route = ModelRoute.to(endpoint.base_url)
    elif (real := task.agent.CAPABILITIES.endpoint) is not None:
        api = api_proxy_plan(task, real)
        route = ModelRoute.to(real_base_url(real)) if api is None else api.route
    spec = task.sandbox
    agent_paths = tuple(agent_host_paths(make_agent(task.agent.type)))
    python_env, task_node_modules = await sandbox_envs(spec.python, spec.node)
    staging = plugin_staging(task.agent)
    provision = Provision(
        role="agent",
        sources=tuple(spec.template_sources),
        env={**spec.env, **(route.env if route and spec.network == "model" else {})},
        path_dirs=tuple(spec.mock_path_dirs),
        recorders=tuple(spec.recorders),
        network=spec.network,
        model_port=route.port if route else None,
        limits=spec.limits,
        host_paths=agent_paths,
        python_env=python_env,
        node_modules=task_node_modules,
        plugins=tuple(s.staged for s in staging),
        shown=solution_shown(task),
    )
    stage = Stage(await make_sandbox(spec, provision), endpoint, [], None)
    stage.model_answered, stage.model_stalled = provider.model_watch() or (None, None)
    stage.vantage = provider.vantage()
    stack.push_async_callback(close_quietly, stage.sandbox, stage.leftovers)
    if spec.recorders:
        stage.recorder = RecordingHost(
            stage.sandbox, spec.recorders, on_call=lambda call: sink.write(cli_event(call))
        )
        await stage.recorder.start(stage.sandbox.host_socket("recorder"))
        stack.push_async_callback(stage.recorder.stop)
    if api is not None:
        await _open_api_proxy(api, stage, spec.network, stack)
    elif route is not None and spec.network == "model":
        proxy = ModelProxy(route.upstream)
        await proxy.start(stage.sandbox.host_socket("model"))
        stack.push_async_callback(proxy.stop)
        stage.model_stalled = stage.model_stalled or proxy.awaiting_reply
    await _pre_run(task, stage.sandbox)
    stage.plugins = tuple(await offered_plugins(task.agent, stage.sandbox, staging))
    stage.prepared = [await criterion.prepare(stage.sandbox) for criterion in task.success_criteria]
    if not reads_only(task):  # a verifier that runs nothing reads no pytest configuration
        stage.pytest_config = await capture_pytest_config(stage.sandbox)
        stage.prepared = await with_expected_tests(task, stage.sandbox, stage.prepared, stage.pytest_config)
    return stage


def solution_shown(task: TaskSpec) -> tuple[Shown, ...]:
    """The task's solution folder, for an agent that runs the reference solution (the oracle) and no
    other: hidden material never exists where an agent under test can reach it."""
    solution = task.reference_solution
    if isinstance(solution, ReferenceFolder) and task.agent.CAPABILITIES.runs_reference:
        return (Shown(solution.mount_point, Path(solution.path)),)
    return ()


@dataclass(frozen=True)
class ApiPlan:
    """A real model reached through the harness's API proxy: its upstream and real key, and the model."""

    upstream: str
    credential: Credential
    model: str | None
    route: ModelRoute


PROXY_PORT = 18080
"""Port the in-sandbox forwarder listens on for the API proxy (``network: model``)."""


def api_proxy_plan(task: TaskSpec, real: RealEndpoint) -> ApiPlan | None:
    """The API proxy for a real model, when the host holds its key (None: the agent's CLI talks to its
    provider directly, and its record is its own: ``record.source: agent``)."""
    key = os.environ.get(real.key) if real.key else None
    if not key:
        return None
    route = ModelRoute(("127.0.0.1", PROXY_PORT), PROXY_PORT, {})
    return ApiPlan(real_base_url(real), Credential(real.header, key), task.agent.model, route)


async def _open_api_proxy(api: ApiPlan, stage: Stage, network: str, stack: AsyncExitStack) -> None:
    """Start the API proxy where the agent's sandbox reaches it: its socket under ``network: model``
    (the forwarder relays the CLI's connections), the host's loopback under ``tempdir`` and ``bwrap``
    with ``network: host``. Elsewhere (``docker`` with the engine's networks) there is none."""
    driver = stage.sandbox.driver
    loopback = driver == "tempdir" or (driver == "bwrap" and network == "host")
    if not loopback and network != "model":
        return
    proxy = ApiProxy(api.upstream, api.credential, verify=upstream_verify())
    socket = None if loopback else stage.sandbox.host_socket("model")
    await asyncio.to_thread(proxy.start, socket)
    stack.callback(proxy.stop)
    url = proxy.base_url if loopback else f"http://127.0.0.1:{PROXY_PORT}"
    stage.endpoint = ModelEndpoint(url, api_key=DUMMY_KEY, model=api.model, scripted=False)
    stage.model_answered, stage.model_stalled = proxy.answered, proxy.awaiting_reply
    stage.vantage = Vantage("proxy", proxy.calls)


def cli_event(call: ShimCall) -> CliCall:
    """A recorded call as its trajectory event."""
    record = call.record()
    record.pop("ts")
    return CliCall(**record)


async def _pre_run(task: TaskSpec, sandbox: Sandbox) -> None:
    """``pre_run`` commands; one that fails (with ``fail_on_error``) is a harness error: the task's
    set-up did not happen, so the agent would not be measured."""
    for step in task.pre_run:
        result = await sandbox.exec(step.command, timeout=step.timeout)
        if result.exit_code != 0 and step.fail_on_error:
            raise CoderEvalError(
                f"pre_run {step.command!r} exited {result.exit_code}: {result.output[-500:]}"
            )


async def capture_pytest_config(sandbox: Sandbox) -> tuple[str, bytes] | None:
    """The workspace's pytest configuration file before the agent ran (the verifier uses this copy)."""
    present = set(await sandbox.glob("*", include_links=True))  # one listing, then only those there
    files = {}
    for name in (n for n in PYTEST_CONFIGS if n in present):
        try:
            files[name] = await sandbox.read_file(name)
        except WorkspaceFileError:
            continue
    return pytest_config(files)


async def close_quietly(sandbox: Sandbox, leftovers: list[str]) -> None:
    """Close ``sandbox``; what cannot be removed is noted in ``leftovers`` (cleaned up by a later run)."""
    try:
        await sandbox.close()
    except SandboxError as exc:
        leftovers.append(str(exc))


class ScriptedProvider:
    """The scripted model server of one episode, started on first use and kept across the episode's
    attempts: an error it served (``error: {times: 1}``) stays served on the retry, as a real
    provider's passing rate limit would."""

    def __init__(self, task: TaskSpec, seed: int, stack: ExitStack) -> None:
        self._task, self._seed, self._stack = task, seed, stack
        self._endpoint: ModelEndpoint | None = None
        self._server: ScriptedServer | None = None

    def endpoint(self) -> ModelEndpoint | None:
        """The server's endpoint (None when the task's model is not ``scripted``)."""
        task = self._task
        if task.agent.model != "scripted" or self._endpoint is not None:
            return self._endpoint
        from coder_eval.scripted import ScriptedServer, load_script

        if task.scripted is None:
            raise CoderEvalError(
                f"task {task.task_id!r}: agent.model is 'scripted' but the task has no 'scripted' block"
            )
        script = load_script(task.scripted, base_dir=task.source_dir)
        self._server = self._stack.enter_context(ScriptedServer(script, seed=self._seed))
        self._endpoint = ModelEndpoint(self._server.base_url, model=script.model)
        return self._endpoint

    def vantage(self) -> Vantage | None:
        """From now on: the server's record of this attempt's requests, as ``model_call`` events."""
        from coder_eval.endpoint.exchange import scripted_call

        server = self._server
        if server is None:
            return None
        seen = len(server.requests)

        def calls() -> list[ModelCall]:
            return [scripted_call(r, seq) for seq, r in enumerate(server.requests[seen:])]

        return Vantage("scripted", calls)

    def model_watch(self) -> tuple[Callable[[], bool | None], Callable[[], bool]] | None:
        """From now on: whether the server has answered a main request (None: none came), and whether
        it is holding the latest one unanswered (a ``hang``); None when the model is not scripted."""
        server = self._server
        if server is None:
            return None
        seen = len(server.requests)

        def main() -> list[Any]:
            return [r for r in server.requests[seen:] if r.kind == "main"]

        def answered() -> bool | None:
            requests = main()
            return any(r.error is None for r in requests) if requests else None

        def stalled() -> bool:
            return bool(requests := main()) and requests[-1].error == "hang"

        return answered, stalled
