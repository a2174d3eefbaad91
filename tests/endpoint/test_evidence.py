"""A run's end read from the endpoint's record: only the conversation's last request decides."""

from __future__ import annotations

from coder_eval.endpoint.evidence import answered, provider_fault
from tests.endpoint.builders import answer, text


def test_a_fault_on_the_last_request_is_the_providers() -> None:
    calls = [answer(0, text("hi")), answer(1, status=529, position=1)]
    assert provider_fault(calls) == "the model endpoint answered HTTP 529"


def test_a_fault_the_cli_got_past_says_nothing() -> None:
    calls = [answer(0, status=529, position=0), answer(1, text("hi"), position=0)]
    assert provider_fault(calls) is None and answered(calls)


def test_no_answer_is_a_fault_and_other_requests_do_not_count() -> None:
    calls = [
        answer(0, text("hi")),
        answer(1, status=None, position=1),
        answer(2, text("t"), kind="auxiliary"),
    ]
    calls[1] = calls[1].model_copy(update={"error": "hang: the answer stalled"})
    assert provider_fault(calls) == "the model endpoint gave no answer (hang: the answer stalled)"


def test_a_conversation_never_answered() -> None:
    assert not answered([answer(0, status=401)])
    assert not answered([answer(0, text("title"), kind="auxiliary")])
    assert provider_fault([]) is None
