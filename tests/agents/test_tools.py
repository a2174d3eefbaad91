from coder_eval.agents.tools import VOCABULARIES, canonical_input, canonical_name, client_of, native_form


def test_every_cli_shell_tool_is_bash() -> None:
    assert {canonical_name(n) for n in ("Bash", "bash", "exec_command", "run_shell_command")} == {"Bash"}


def test_skill_tools_are_skill_and_unknown_names_are_their_own() -> None:
    assert canonical_name("activate_skill") == canonical_name("skill") == "Skill"
    assert canonical_name("mcp__github__create_issue") == "mcp__github__create_issue"


def test_inputs_get_the_canonical_keys_back() -> None:
    assert canonical_input("exec_command", {"cmd": "ls"}) == {"command": "ls"}
    assert canonical_input("edit", {"filePath": "/w/a", "oldString": "x"}) == {
        "file_path": "/w/a",
        "old_string": "x",
    }
    assert canonical_input("glob", {"dir_path": "src", "pattern": "*"}) == {"path": "src", "pattern": "*"}
    assert canonical_input("Bash", {"command": "ls"}) == {"command": "ls"}


def test_native_forms_and_clients() -> None:
    assert native_form("gemini", "Edit").name == "replace"  # type: ignore[union-attr]
    assert native_form("codex", "Read") is None
    assert client_of(["read", "bash", "skill"]) == "opencode"
    assert client_of(["exec_command", "apply_patch"]) == "codex"
    assert client_of(["Foo"]) is None


def test_each_vocabulary_names_a_shell() -> None:
    assert all("Bash" in vocabulary for vocabulary in VOCABULARIES.values())
