"""The agent CLI's stream checked against the endpoint's record: what has no counterpart never grades."""

from __future__ import annotations

from coder_eval.endpoint.check import check_record, same_call, verified_view
from coder_eval.trajectory import ToolCall, ToolResult, Usage
from tests.endpoint.builders import answer, called, returned, said, shown, text, use

HONEST = [
    said(text("Let me run the tests."), use("t1", "Bash", command="pytest -q")),
    called("t1", "Bash", command="pytest -q"),
    returned("t1", "1 failed, 2 passed", is_error=True),
    said(text("One test fails.")),
    answer(0, text("Let me run the tests."), use("t1", "Bash", command="pytest -q")),
    answer(1, text("One test fails."), results=(shown("t1", "1 failed, 2 passed", is_error=True),)),
]


def test_an_honest_stream_is_verified_and_counted_as_served() -> None:
    checked = check_record(HONEST, "scripted", confined=True)
    assert (checked.record.unverified_count, checked.record.tool_calls) == (0, 1)
    assert checked.usage == Usage(input_tokens=200, output_tokens=20)
    assert checked.cost_usd is not None and abs(checked.cost_usd - 0.0009) < 1e-12
    assert checked.final_text == "One test fails."
    assert checked.record.verified


def test_a_forged_call_and_its_forged_result_never_reach_a_grader() -> None:
    forged = [
        said(use("toolu_forged", "Bash", command="pytest -q")),
        called("toolu_forged", "Bash", command="pytest -q"),
        returned("toolu_forged", "3 passed"),
    ]
    events = [*HONEST, *forged]
    checked = check_record(events, "scripted", confined=True)
    assert checked.record.unverified_ids == ["toolu_forged"]
    assert checked.record.unverified_count == 3
    view = verified_view(events, "scripted")
    assert [e.id for e in view if isinstance(e, ToolCall | ToolResult)] == ["t1", "t1"]


def test_a_result_the_model_was_not_shown_is_unverified() -> None:
    events = [*HONEST[:2], returned("t1", "3 passed"), *HONEST[3:]]
    checked = check_record(events, "scripted", confined=True)
    assert any("another result" in why for why in checked.record.unverified)
    assert not [e for e in verified_view(events, "scripted") if isinstance(e, ToolResult)]


def test_two_different_results_for_one_call_at_the_endpoint_verify_neither() -> None:
    second = answer(2, text("All pass."), results=(shown("t1", "3 passed"),), position=1)
    checked = check_record([*HONEST, second], "scripted", confined=True)
    assert any("different results" in why for why in checked.record.unverified)


def test_a_call_under_a_served_id_with_another_input_is_unverified() -> None:
    events = [called("t1", "Bash", command="rm -rf /"), *HONEST[4:]]
    checked = check_record(events, "scripted", confined=True)
    assert checked.record.unverified == ["tool_call t1 Bash: the model asked for another call under this id"]


def test_text_the_model_never_wrote_is_unverified() -> None:
    events = [*HONEST, said(text("All 3 tests pass."))]
    checked = check_record(events, "scripted", confined=True)
    assert checked.record.unverified == ["message: text the model never wrote ('All 3 tests pass.')"]


def test_a_cli_with_its_own_call_ids_is_matched_by_tool_and_input() -> None:
    events = [
        called("item_0", "exec_command", cmd="python -m pytest   -q"),
        returned("item_0", "2 passed", exit_code=0),
        answer(0, use("call_a", "exec_command", cmd="python -m pytest -q")),
        answer(1, text("Done."), results=(shown("call_a", "Exit code: 0\nOutput:\n2 passed", None),)),
    ]
    assert check_record(events, "scripted", confined=True).record.unverified_count == 0
    lying = [*events[:1], returned("item_0", "2 passed", exit_code=0), *events[2:3]]
    lying.append(
        answer(1, text("Done."), results=(shown("call_a", "Exit code: 1\nOutput:\n2 passed", None),))
    )
    assert check_record(lying, "scripted", confined=True).record.unverified == [
        "tool_result item_0: the model was shown exit code 1"
    ]


def test_calls_without_ids_pair_with_results_by_tool_in_order() -> None:
    events = [
        called("run_shell_command__a", "run_shell_command", command="ls"),
        returned("run_shell_command__a", "a.txt"),
        answer(0, use(None, "run_shell_command", command="ls")),
        answer(1, text("Done."), results=(shown("a", "Output: a.txt", None, name="run_shell_command"),)),
    ]
    assert check_record(events, "scripted", confined=True).record.unverified_count == 0


def test_without_a_vantage_point_nothing_is_checked_and_the_record_says_so() -> None:
    forged = [*HONEST[:4], said(text("All pass."))]
    checked = check_record(forged, "agent", confined=True)
    assert (checked.record.source, checked.record.verified, checked.usage) == ("agent", False, None)
    assert "the agent's own" in checked.record.notes[0]
    assert verified_view(forged, "agent") == forged


def test_a_tempdir_record_is_checked_but_not_verified() -> None:
    assert not check_record(HONEST, "scripted", confined=False).record.verified


def test_same_call_reads_each_clis_form() -> None:
    assert same_call("Bash", {"command": "ls  -a"}, "Bash", {"command": "ls -a"})
    assert same_call("Edit", {"file_path": "a"}, "Edit", {"file_path": "a", "replace_all": False})
    assert not same_call("Edit", {"file_path": "a"}, "Edit", {"file_path": "a", "replace_all": True})
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n-a\n+b\n*** End Patch\n"
    assert same_call("apply_patch", patch, "apply_patch", {"changes": [{"path": "/w/calc.py"}]})
    assert not same_call("apply_patch", patch, "apply_patch", {"changes": [{"path": "/w/other.py"}]})
    assert not same_call("Bash", {"command": "ls"}, "Read", {"file_path": "ls"})


def test_a_clis_own_summary_of_a_patch_is_checked_against_the_files_the_model_was_shown() -> None:
    patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n-a\n+b\n*** End Patch\n"
    events = [
        called("item_3", "apply_patch", changes=[{"path": "/w/calc.py", "kind": "update"}]),
        returned("item_3", "update /w/calc.py"),
        answer(0, use("call_p", "apply_patch", input=patch)),
        answer(
            1,
            text("Done."),
            results=(shown("call_p", "Exit code: 0\nOutput:\nSuccess. Updated:\nM calc.py\n", None),),
        ),
    ]
    events[2].content[0]["input"] = patch  # a freeform input is the patch itself
    assert check_record(events, "scripted", confined=True).record.unverified_count == 0
    events[1] = returned("item_3", "update /w/other.py")
    assert check_record(events, "scripted", confined=True).record.unverified_count == 1
