from typing import Any

from coder_eval.scripted.usage import PromptCache, input_tokens, tokens

from .conftest import body


def cached(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with a cache breakpoint on its system prompt and on its last message."""
    marked = dict(
        request, system=[{"type": "text", "text": request["system"], "cache_control": {"type": "ephemeral"}}]
    )
    last = marked["messages"][-1]
    marked["messages"] = [
        *marked["messages"][:-1],
        dict(
            last,
            content=[{"type": "text", "text": str(last["content"]), "cache_control": {"type": "ephemeral"}}],
        ),
    ]
    return marked


def test_tokens_are_about_four_characters_each() -> None:
    assert [tokens(0), tokens(4), tokens(5), tokens(400)] == [0, 1, 2, 100]


def test_input_and_output_tokens_grow_with_size() -> None:
    small = PromptCache().usage(body(0), output_chars=40)
    large = PromptCache().usage(body(0, system="x" * 4000), output_chars=4000)

    assert large["input_tokens"] - small["input_tokens"] >= 1000 - 5
    assert (small["output_tokens"], large["output_tokens"]) == (10, 1000)
    assert small["cache_read_input_tokens"] == small["cache_creation_input_tokens"] == 0


def test_cache_control_creates_then_reads_the_prefix() -> None:
    cache = PromptCache()
    first = cache.usage(cached(body(0, system="s" * 4000)), output_chars=10)
    second = cache.usage(cached(body(1, system="s" * 4000)), output_chars=10)

    assert first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] >= 1000
    assert second["cache_read_input_tokens"] >= 1000
    assert 0 < second["cache_creation_input_tokens"] < 100


def test_all_buckets_add_up_to_the_counted_input() -> None:
    request = cached(body(2, system="s" * 999))
    usage = PromptCache().usage(request, output_chars=1)

    total = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    assert abs(total - input_tokens(request)) <= 2
