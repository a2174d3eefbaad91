"""What a task may set for the ``command`` agent: any CLI run from a command template.

Example::

    agent:
      type: command
      command: my-agent --non-interactive --json --task {prompt}
      events: claude-stream-json      # or atif, or none (stdout is the final message)
      env: {MY_AGENT_KEY: {from_env: MY_AGENT_KEY}}
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from coder_eval.agents.spec import AgentSpecBase, Capabilities, EnvValue, kind_field

EventStream = Literal["claude-stream-json", "atif", "none"]


class CommandSpec(AgentSpecBase):
    """The ``command`` agent block."""

    CAPABILITIES: ClassVar[Capabilities] = Capabilities(live_events=False)  # its events are read at exit

    type: Literal["command"] = kind_field("command")
    command: str = Field(min_length=1, description="Shell command; {prompt} is the shell-quoted prompt.")
    prompt_on_stdin: bool = Field(default=False, description="Also send the prompt on stdin.")
    events: EventStream = Field(
        default="none", description="The JSONL event stream the CLI prints (none: stdout is the answer)."
    )
    env: dict[str, EnvValue] = Field(
        default_factory=dict, description="Environment for the command; {from_env: NAME} for secrets."
    )
