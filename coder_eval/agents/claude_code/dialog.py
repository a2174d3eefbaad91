"""The user messages of one Claude Code session: the task prompt, then each follow-up.

Example::

    dialog = Dialog(request.prompt, request.conversation, sink)
    async for message in query(prompt=dialog.prompts(), options=options):
        recorder.handle(message)
        if isinstance(message, ResultMessage):
            dialog.on_result(message)
    dialog.error      # why the conversation could not go on, or None

The CLI reads user messages from its stdin (``--input-format stream-json``) and answers each with
a run that ends in a ``ResultMessage``; the session, its context and its sandbox carry over from
one message to the next. After each successful result the conversation (a simulated user) writes
the next message; when it returns None, the prompt stream ends, the SDK closes the CLI's stdin and
the CLI exits. Without a conversation the stream holds the task prompt alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import ResultMessage

from coder_eval.agents.base import AgentReply, Conversation, EventSink
from coder_eval.errors import AgentError


def user_message(text: str) -> dict[str, Any]:
    """One user message in the CLI's stream-json input format.

    Example: ``user_message("hi")["message"]`` -> ``{"role": "user", "content": "hi"}``.
    """
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "",
    }


class Dialog:
    """Feeds the CLI the prompt, then the conversation's follow-ups, one per result."""

    def __init__(self, prompt: str, conversation: Conversation | None, sink: EventSink) -> None:
        self.prompt = prompt
        self.conversation = conversation
        self.sink = sink
        self.error: str | None = None
        self.replies = 0
        self._results: asyncio.Queue[ResultMessage] = asyncio.Queue()

    def on_result(self, result: ResultMessage) -> None:
        """The CLI finished answering the latest message."""
        self._results.put_nowait(result)

    async def prompts(self) -> AsyncIterator[dict[str, Any]]:
        """The stream the SDK writes to the CLI's stdin; it ends when the dialog does."""
        yield user_message(self.prompt)
        if self.conversation is None:
            return
        while True:
            result = await self._results.get()
            if result.is_error or result.subtype != "success":
                return  # max_turns, a budget or an API error ends the dialog; the outcome says why
            self.replies += 1
            try:
                text = await self.conversation.next_message(
                    AgentReply(self.replies, result.result or ""), self.sink
                )
            except Exception as exc:  # the SDK would swallow it: keep it for the outcome
                self.error = str(exc) if isinstance(exc, AgentError) else f"{type(exc).__name__}: {exc}"
                return
            if text is None:
                return
            yield user_message(text)
