"""Token usage derived from sizes: about four characters per token, with a simulated prompt cache.

Example::

    cache = PromptCache()
    cache.usage(body, output_chars=120)
    # {"input_tokens": 35, "output_tokens": 30,
    #  "cache_creation_input_tokens": 4100, "cache_read_input_tokens": 0}

A request is read in the order the API caches it: tools, then system blocks, then message blocks.
Every block that carries ``cache_control`` ends a cacheable prefix. The longest prefix already seen
(by any earlier request) counts as ``cache_read_input_tokens``; the rest of the cacheable part as
``cache_creation_input_tokens``; everything after the last breakpoint as ``input_tokens``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from typing import Any

CHARS_PER_TOKEN = 4


def tokens(chars: int) -> int:
    """Estimated tokens for ``chars`` characters. Example: ``tokens(10) == 3``."""
    return math.ceil(chars / CHARS_PER_TOKEN)


def request_chunks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request's pieces in cache order, as (serialized piece, ends a cache breakpoint).

    Example: ``request_chunks({"system": "Be brief.", "messages": []}) == [('"Be brief."', False)]``
    """
    system = body.get("system")
    system_blocks = system if isinstance(system, list) else ([] if system is None else [system])
    pieces: list[Any] = [*(body.get("tools") or []), *system_blocks]
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else message
        blocks = content if isinstance(content, list) else [content]
        pieces.extend(
            {"role": message.get("role"), "block": b} if isinstance(message, dict) else b for b in blocks
        )
    return [(serialize(piece), _has_breakpoint(piece)) for piece in pieces]


def _has_breakpoint(piece: Any) -> bool:
    inner = piece.get("block", piece) if isinstance(piece, dict) else piece
    return isinstance(inner, dict) and "cache_control" in inner


def serialize(piece: Any) -> str:
    """JSON without ``cache_control``, so moving a breakpoint does not change the prefix."""
    return json.dumps(_strip(piece), sort_keys=True, ensure_ascii=False)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def input_tokens(body: dict[str, Any]) -> int:
    """All input tokens of a request, cached or not (what ``count_tokens`` answers)."""
    return max(1, tokens(sum(len(text) for text, _ in request_chunks(body))))


class PromptCache:
    """Prefixes seen so far, shared by every request to one server (thread-safe)."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def usage(
        self, body: dict[str, Any], output_chars: int, chunks: list[tuple[str, bool]] | None = None
    ) -> dict[str, int]:
        """The ``usage`` object of a response to ``body`` with ``output_chars`` of content.

        ``chunks`` are the request's pieces when it is not an Anthropic request (another dialect's
        ``chunks``; every piece ends a prefix there, as with automatic prompt caching).
        """
        chars, cached_chars, read_chars = 0, 0, 0
        digest = hashlib.sha256()
        prefixes: list[str] = []
        with self._lock:
            for text, breakpoint_ in request_chunks(body) if chunks is None else chunks:
                chars += len(text)
                digest.update(text.encode())
                if breakpoint_:
                    key = digest.copy().hexdigest()
                    prefixes.append(key)
                    cached_chars = chars
                    if key in self._seen:
                        read_chars = chars
            self._seen.update(prefixes)
        return {
            "input_tokens": max(1, tokens(chars - cached_chars)),
            "output_tokens": max(1, tokens(output_chars)),
            "cache_creation_input_tokens": tokens(cached_chars) - tokens(read_chars),
            "cache_read_input_tokens": tokens(read_chars),
        }
