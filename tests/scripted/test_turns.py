from typing import Any

import pytest

from coder_eval.scripted import load_script
from coder_eval.scripted.replay import Replayer
from coder_eval.scripted.turns import SUBAGENT_MARKER, Cursor, RequestView, select

from .conftest import body


def answer(script_spec: dict[str, Any], *bodies: dict[str, Any], seed: int = 0) -> list[tuple[Any, str]]:
    """(turn, branch) for each body, in order, against one cursor."""
    script = load_script(script_spec)
    cursor = Cursor()
    out = []
    for request in bodies:
        picked = select(script.turns, cursor, RequestView.of(request), seed, script.final_text)
        out.append((picked.turn, picked.branch))
    return out


THREE = {"turns": [{"blocks": [{"text": "a"}]}, {"blocks": [{"text": "b"}]}, {"blocks": [{"text": "c"}]}]}


def test_turn_follows_the_number_of_assistant_messages() -> None:
    assert answer(THREE, body(0), body(1), body(2), body(3)) == [
        (0, "blocks"),
        (1, "blocks"),
        (2, "blocks"),
        (None, "final"),
    ]


def test_a_repeated_request_gets_the_same_turn() -> None:
    assert answer(THREE, body(0), body(1), body(1)) == [(0, "blocks"), (1, "blocks"), (1, "blocks")]


def test_request_kinds() -> None:
    script = load_script(THREE)
    marked = body(0, system=f"x-anthropic-billing-header: {SUBAGENT_MARKER};")

    assert RequestView.of(body(0)).kind(script) == "main"
    assert RequestView.of(body(0, tools=())).kind(script) == "auxiliary"
    assert RequestView.of(marked).kind(script) == "subagent"
    assert (
        RequestView.of(body(0, tools=())).kind(script.model_copy(update={"answer_without_tools": True}))
        == "main"
    )


@pytest.mark.parametrize(
    ("when", "sent", "holds"),
    [
        ({"tool_offered": "Skill"}, body(0, tools=("Bash", "Skill")), True),
        ({"tool_offered": ["Skill", "Bash"]}, body(0, tools=("Bash",)), False),
        ({"skill_offered": "sitectl"}, body(0, ("Skill",), "- site-tools:sitectl: Manage the site."), True),
        ({"skill_offered": "site-tools:sitectl"}, body(0, ("Skill",), "- site-tools:sitectl: Manage."), True),
        ({"skill_offered": "sitectl"}, body(0, ("Bash",), "- site-tools:sitectl: Manage the site."), False),
        ({"skill_offered": "sitectl"}, body(0, ("Skill",), "- deploy: Deploy with sitectl."), False),
        ({"request_contains": "needle"}, body(0, system="hay needle hay"), True),
        ({"request_matches": r"v\d+\.\d+"}, body(0, first_user="upgrade to v2.3"), True),
        ({"request_matches": r"v\d+\.\d+"}, body(0), False),
    ],
)
def test_conditions_on_the_request(when: dict[str, Any], sent: dict[str, Any], holds: bool) -> None:
    spec = {"turns": [{"when": when, "blocks": [{"text": "yes"}], "otherwise": [{"text": "no"}]}]}

    assert answer(spec, sent) == [(0, "blocks" if holds else "otherwise")]


def test_conditions_on_the_latest_tool_result() -> None:
    result = [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "3 failed"}]}]
    spec = {
        "turns": [
            {"blocks": [{"text": "run"}]},
            {"when": {"last_tool_result_matches": r"\d+ failed"}, "blocks": [{"text": "fix"}]},
        ]
    }

    assert answer(spec, body(0), body(1, last_user=result))[-1] == (1, "blocks")
    assert answer(spec, body(0), body(1, last_user="3 failed"))[-1] == (None, "final")


def test_history_the_server_did_not_answer_starts_at_the_first_turn() -> None:
    assert answer(THREE, body(2), body(3)) == [(0, "blocks"), (1, "blocks")]


def test_a_failing_turn_without_otherwise_is_skipped_and_the_next_answers() -> None:
    spec = {"turns": [{"when": {"tool_offered": "Skill"}, "blocks": [{"text": "skill"}]}, *THREE["turns"]]}

    assert answer(spec, body(0), body(1), body(2)) == [(1, "blocks"), (2, "blocks"), (3, "blocks")]


def test_an_error_turn_fails_the_first_attempts_then_gives_way() -> None:
    spec = {"turns": [{"error": {"kind": "overloaded", "times": 2}}, {"blocks": [{"text": "ok"}]}]}

    assert answer(spec, body(0), body(0), body(0), body(1)) == [
        (0, "error"),
        (0, "error"),
        (1, "blocks"),
        (None, "final"),
    ]


def test_an_error_with_blocks_answers_them_once_spent() -> None:
    spec = {"turns": [{"error": {"kind": "server", "times": 1}, "blocks": [{"text": "ok"}]}]}

    assert answer(spec, body(0), body(0)) == [(0, "error"), (0, "blocks")]


def test_an_error_without_times_fails_every_attempt() -> None:
    assert answer({"turns": [{"error": {"kind": "auth"}}]}, body(0), body(0), body(0)) == [(0, "error")] * 3


CHOICE = {
    "turns": [
        {"choose": [{"weight": 0.7, "blocks": [{"text": "A"}]}, {"weight": 0.3, "blocks": [{"text": "B"}]}]},
    ]
}


def test_seeded_choice_is_reproducible() -> None:
    for seed in range(20):
        first = answer(CHOICE, body(0), seed=seed)
        assert answer(CHOICE, body(0), body(0), seed=seed) == first * 2


def test_seeded_choice_differs_across_seeds_with_the_weights() -> None:
    branches = [answer(CHOICE, body(0), seed=seed)[0][1] for seed in range(400)]

    assert 0.6 < branches.count("choose[0]") / len(branches) < 0.8


def test_choice_ignores_auxiliary_requests_and_other_conversations() -> None:
    script = load_script({"turns": [{"blocks": [{"text": "x"}]}, *CHOICE["turns"]]})
    quiet, busy = Replayer(script, seed=5), Replayer(script, seed=5)
    quiet.answer(body(0))

    busy.answer(body(0, tools=()))
    busy.answer(body(0))
    busy.answer(body(0, first_user="Another conversation."))
    busy.answer(body(1, tools=()))

    assert busy.answer(body(1)).selection == quiet.answer(body(1)).selection
