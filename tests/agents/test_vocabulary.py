"""Each agent kind's tool vocabulary lives on its spec: the rows are what ``coder_eval.agents.tools`` and
the scripted model read."""

from __future__ import annotations

from coder_eval.agents import AGENTS
from coder_eval.agents.tools import SIGNATURES, VOCABULARIES, vocabulary_of
from coder_eval.agents.vocabulary import ToolForm, Vocabulary, same_names


def test_every_cli_kind_declares_a_shell_on_its_own_row() -> None:
    shells = {kind: row.spec.TOOLS.by_canonical().get("Bash") for kind, row in AGENTS.items()}

    assert {kind for kind, form in shells.items() if form is not None} == {
        "claude-code",
        "codex",
        "opencode",
        "gemini",
    }
    assert {form.name: kind for kind, form in shells.items() if form is not None} == SIGNATURES


def test_the_gathered_table_is_the_rows() -> None:
    assert VOCABULARIES["opencode"]["Edit"].keys["old_string"] == "oldString"
    assert VOCABULARIES["gemini"]["Edit"].required == {
        "instruction": "Replace the given text in {file_path}."
    }
    assert "command" not in VOCABULARIES and "none" not in VOCABULARIES  # no tools of their own


def test_absolute_paths_and_an_unknown_kind() -> None:
    assert vocabulary_of("gemini").absolute_paths and vocabulary_of("opencode").absolute_paths
    assert not vocabulary_of("codex").absolute_paths
    assert vocabulary_of("no-such-kind") == Vocabulary()


def test_a_later_form_of_the_same_canonical_tool_wins() -> None:
    vocabulary = Vocabulary((*same_names("Agent"), ToolForm("Task", "Agent")))

    assert vocabulary.by_canonical() == {"Agent": ToolForm("Task", "Agent")}
