"""An endpoint record made a script the scripted server replays."""

from __future__ import annotations

from coder_eval.endpoint.replay import script_of
from coder_eval.scripted.script import load_script
from tests.endpoint.builders import WORKDIR, agent_phase, answer, text, use


def test_each_step_is_a_turn_and_faults_before_an_answer_are_errors_met_again() -> None:
    events = [
        agent_phase(),
        answer(0, text("Look."), use("t1", "exec_command", cmd=f"cat {WORKDIR}/calc.py")),
        answer(1, status=529, position=1),
        answer(2, status=None, position=1),
        answer(
            3, use("t2", "Edit", file_path=f"{WORKDIR}/calc.py", old_string="-", new_string="+"), position=1
        ),
        answer(4, text("Done."), position=2),
        answer(5, text("A title"), kind="auxiliary", position=0),
    ]
    script = script_of(events)
    assert script["turns"] == [
        {"blocks": [{"text": "Look."}, {"tool_use": {"name": "Bash", "input": {"command": "cat calc.py"}}}]},
        {
            "blocks": [
                {
                    "tool_use": {
                        "name": "Edit",
                        "input": {"file_path": "calc.py", "old_string": "-", "new_string": "+"},
                    }
                }
            ],
            "error": {"kind": "cut_stream", "times": 2},
        },
        {"blocks": [{"text": "Done."}]},
    ]
    assert (script["auxiliary_text"], script["model"]) == ("A title", "claude-sonnet-4-5")
    load_script(script)  # a valid script


def test_a_freeform_input_and_sub_agent_steps_are_kept() -> None:
    patch = f"*** Begin Patch\n*** Add File: {WORKDIR}/a.txt\n+A\n*** End Patch\n"
    events = [
        agent_phase(),
        answer(0, {"type": "tool_use", "id": "c1", "name": "apply_patch", "input": patch}),
        answer(1, text("Sub."), kind="subagent", position=0),
        answer(2, text("Other sub."), kind="subagent", position=0),
    ]
    script = script_of(events)
    assert script["turns"][0]["blocks"][0]["tool_use"] == {
        "name": "apply_patch",
        "input": "*** Begin Patch\n*** Add File: a.txt\n+A\n*** End Patch\n",
    }
    assert script["subagent_turns"] == [{"blocks": [{"text": "Sub."}]}]
    assert load_script(script).turns[0].blocks is not None


def test_a_step_never_answered_is_an_error_every_time() -> None:
    script = script_of([answer(0, status=401)])
    assert script["turns"] == [{"error": {"kind": "auth", "times": None}}]
