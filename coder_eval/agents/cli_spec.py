"""The fields every CLI agent's spec has, and how one is read from today's task.

Example::

    class CodexSpec(CliAgentSpec):
        type: Literal["codex"] = "codex"
        reasoning_effort: str | None = None

    spec = agent_spec(request, CodexSpec)    # the episode's `agent:` block as a CodexSpec
    spec.plugins[0].path, spec.prompt_addition(task_dir)

Each agent kind owns its spec class (``codex/spec.py``, ``opencode/spec.py``, ``gemini/spec.py``);
:func:`agent_spec` is the one place that builds it from a request, so that once requests carry the
kind's own spec it becomes ``request.spec``. Limits come from :func:`run_limits` likewise.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from coder_eval.errors import AgentError
from coder_eval.sandbox.base import SandboxPath

if TYPE_CHECKING:
    from coder_eval.agents.base import AgentRequest
    from coder_eval.sandbox.base import Sandbox
    from coder_eval.task import RunLimits


class LocalPlugin(BaseModel):
    """A plugin folder in the sandbox (its skills under ``skills/<name>/SKILL.md``).

    Example: ``{type: local, path: .plugins/site-tools}``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["local"] = Field(default="local", description="Only local plugin folders.")
    path: SandboxPath = Field(description="The plugin folder, relative to the sandbox root.")


class CliAgentSpec(BaseModel):
    """Fields common to the CLI agents (Codex, OpenCode, Gemini CLI)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    model: str | None = Field(default=None, description="Model id, or 'scripted' for the scripted server.")
    permission_mode: str = Field(default="bypassPermissions", description="bypassPermissions (default).")
    allowed_tools: list[str] = Field(default_factory=list, description="Tools to keep (canonical names).")
    disallowed_tools: list[str] = Field(
        default_factory=list, description="Tools to remove (canonical names)."
    )
    plugins: list[LocalPlugin] = Field(default_factory=list, description="Plugin folders whose skills load.")
    system_prompt: str | None = Field(default=None, description="Extra instructions for the agent.")
    system_prompt_file: str | None = Field(default=None, description="A file of extra instructions.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment for the agent process.")
    max_turns: int | None = Field(default=None, ge=1, description="Model requests (min with run limits).")

    def instructions(self, task_dir: Path) -> str | None:
        """``system_prompt`` and the text of ``system_prompt_file`` (relative to ``task_dir``)."""
        parts = [self.system_prompt] if self.system_prompt else []
        if self.system_prompt_file:
            path = task_dir / self.system_prompt_file
            try:
                parts.append(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise AgentError(f"agent.system_prompt_file: cannot read {path}: {exc}") from exc
        return "\n\n".join(parts) or None


Spec = TypeVar("Spec", bound=CliAgentSpec)


def agent_spec(request: AgentRequest, kind: type[Spec]) -> Spec:
    """The episode's agent block as ``kind``: the common fields of today's task-wide agent block."""
    agent = request.task.agent
    return kind(
        model=agent.model,
        permission_mode=agent.permission_mode,
        allowed_tools=list(agent.allowed_tools),
        disallowed_tools=list(agent.disallowed_tools),
        plugins=[LocalPlugin(path=path) for path in agent.plugins],
        system_prompt=agent.system_prompt,
        env=dict(agent.env),
        max_turns=agent.max_turns,
    )


async def plugin_skills(sandbox: Sandbox, plugins: list[LocalPlugin]) -> list[str]:
    """The skill folders (``skills/<name>/`` holding a ``SKILL.md``) of ``plugins``, workspace-relative.

    Example: ``await plugin_skills(sandbox, [LocalPlugin(path=".plugins/site-tools")])``
    -> ``[".plugins/site-tools/skills/sitectl"]``.
    """
    found: list[str] = []
    for plugin in plugins:
        if not await sandbox.glob(f"{plugin.path}/**", include_links=True):
            raise AgentError(f"agent.plugins: {plugin.path!r} is not a folder with files in the sandbox")
        skills = await sandbox.glob(f"{plugin.path}/skills/*/SKILL.md")
        found += sorted(str(PurePosixPath(path).parent) for path in skills)
    return found


async def copy_skills(sandbox: Sandbox, skills: list[str], target: str) -> None:
    """Copy each skill folder into ``target/<name>/`` (an absolute path in the sandbox, e.g. the
    agent's config folder in HOME) through the sandbox's verbs; a file starting with ``#!`` stays
    executable."""
    for skill in skills:
        name = PurePosixPath(skill).name
        for path in await sandbox.glob(f"{skill}/**"):
            data = await sandbox.read_file(path)
            relative = PurePosixPath(path).relative_to(skill)
            await sandbox.write_file(f"{target}/{name}/{relative}", data, executable=data.startswith(b"#!"))


def max_turns(spec: CliAgentSpec, limits: RunLimits) -> int | None:
    """The tighter of the agent's and the run's ``max_turns``. Example: (10, 4) -> 4."""
    given = [n for n in (spec.max_turns, limits.max_turns) if n is not None]
    return min(given) if given else None


def run_limits(request: AgentRequest) -> RunLimits:
    """The episode's run limits (timeout, turns, token and dollar budgets)."""
    return request.task.run_limits


def task_dir(request: AgentRequest) -> Path:
    """The folder the task file is in (relative spec paths are read from there)."""
    return request.task.source_dir


def model_name(request: AgentRequest, spec: CliAgentSpec, scripted_default: str) -> str | None:
    """The model to run: the script's model (else ``scripted_default``) when the scripted server
    plays the model, else ``spec.model`` (None lets the CLI pick its own default).

    Example: a scripted task whose script says ``model: gpt-5.1-codex`` -> ``"gpt-5.1-codex"``.
    """
    if request.endpoint is None:
        return spec.model
    from coder_eval.scripted import load_script

    task = request.task
    script = load_script(task.scripted, base_dir=task.source_dir) if task.scripted is not None else None
    return (script.model if script is not None else None) or scripted_default
