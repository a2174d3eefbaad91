"""The replay engine behind the server: one answer per Messages request, thread-safe.

Example::

    replayer = Replayer(script, seed=7)
    answer = replayer.answer({"model": "m", "tools": [...], "messages": [...]})
    answer.kind, answer.selection.branch, answer.message["content"]
    replayer.answer(responses_body, RESPONSES)    # another wire dialect, the same script

The message is Anthropic-shaped whatever the dialect; the dialect renders it (``dialect.py``).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from coder_eval.scripted.dialect import ANTHROPIC, Dialect
from coder_eval.scripted.response import HTTP_ERRORS, IdCounter, build_message, content_of
from coder_eval.scripted.script import Block, Script
from coder_eval.scripted.turns import Cursor, RequestKind, RequestView, Selection, select
from coder_eval.scripted.usage import PromptCache

DEFAULT_MODEL = "claude-sonnet-4-5"
PARTIAL_TEXT = "Let me work through this step by step before answering."


@dataclass(frozen=True)
class Answer:
    """What to send back: ``message`` is None for an HTTP error; for ``cut_stream`` and ``hang``
    it is a placeholder whose first events are sent before the connection breaks."""

    kind: RequestKind
    selection: Selection
    message: dict[str, Any] | None
    position: int = 0
    """The assistant turns already in the conversation (the request's place in it)."""


class Replayer:
    """Replays ``script`` with ``seed``; keeps a cursor per conversation and a prompt cache."""

    def __init__(self, script: Script, seed: int) -> None:
        self.script = script
        self.seed = seed
        self.ids = IdCounter()
        self.cache = PromptCache()
        self._cursors: dict[tuple[RequestKind, str], Cursor] = {}
        self._lock = threading.Lock()

    def answer(self, body: dict[str, Any], dialect: Dialect = ANTHROPIC) -> Answer:
        """Select the turn for ``body`` and build the message (unless it is an error)."""
        view = dialect.view(body)
        kind = view.kind(self.script)
        selection = self._select(kind, view)
        if selection.error is not None and selection.error.kind in HTTP_ERRORS:
            return Answer(kind=kind, selection=selection, message=None, position=view.assistant_count)
        blocks = selection.blocks if selection.error is None else (Block(text=PARTIAL_TEXT),)
        content = content_of(blocks, self.ids, view)
        chunks = None if dialect is ANTHROPIC else dialect.chunks(body)
        usage = self.cache.usage(body, output_chars=len(json.dumps(content)), chunks=chunks)
        model = self.script.model or view.model or DEFAULT_MODEL
        message = build_message(content, model=model, message_id=self.ids.new("msg"), usage=usage)
        return Answer(kind=kind, selection=selection, message=message, position=view.assistant_count)

    def _select(self, kind: RequestKind, view: RequestView) -> Selection:
        if kind == "auxiliary":
            return Selection(turn=None, branch="auxiliary", blocks=(Block(text=self.script.auxiliary_text),))
        turns = self.script.subagent_turns if kind == "subagent" else self.script.turns
        with self._lock:
            cursor = self._cursors.setdefault((kind, view.conversation), Cursor())
            return select(turns, cursor, view, self.seed, self.script.final_text, stream=kind)
