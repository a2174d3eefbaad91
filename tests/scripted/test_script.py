from pathlib import Path

import pytest

from coder_eval.errors import TaskError
from coder_eval.scripted import Block, Choice, ErrorSpec, Script, ToolUse, Turn, When, load_script

GOOD_YAML = """\
model: claude-sonnet-4-5
final_text: "All done."
turns:
  - blocks:
      - text: "Let me look."
      - tool_use: {name: Bash, input: {command: ls}}
  - when: {skill_offered: sitectl}
    blocks: [{tool_use: {name: Skill, input: {skill: sitectl}}}]
    otherwise: [{text: "No skill."}]
  - choose:
      - {weight: 0.7, blocks: [{text: A}]}
      - {weight: 0.3, blocks: [{text: B}]}
  - error: {kind: overloaded, times: 1}
"""


def write(tmp_path: Path, text: str, name: str = "script.yaml") -> Path:
    path = tmp_path / "scripts" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_loads_a_yaml_file_relative_to_base_dir(tmp_path: Path) -> None:
    write(tmp_path, GOOD_YAML)

    script = load_script("scripts/script.yaml", base_dir=tmp_path)

    assert script.final_text == "All done."
    assert [t.tool_use.name for t in script.turns[0].blocks or [] if t.tool_use] == ["Bash"]
    assert script.turns[3].error is not None and script.turns[3].error.times == 1


def test_loads_an_inline_dict_and_passes_a_script_through() -> None:
    script = load_script({"turns": [{"blocks": [{"text": "Hi."}]}]})

    assert load_script(script) is script
    assert script.model is None and script.final_text == "Done."


def test_unknown_key_names_the_file_line_field_and_a_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, "turns:\n  - blocks: [{text: hi}]\n  - blokcs: [{text: hi}]\n")

    with pytest.raises(TaskError) as info:
        load_script(path)

    message = str(info.value)
    assert f"{path}:3: turns[1].blokcs: unknown field (did you mean 'blocks'?)" in message


def test_bad_error_kind_names_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, "turns:\n  - error: {kind: explode}\n")

    with pytest.raises(TaskError, match=r"script.yaml:2: turns\[0\]\.error\.kind: Input should be 'auth'"):
        load_script(path)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"missing\.yaml: cannot read script"):
        load_script("missing.yaml", base_dir=tmp_path)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"turns": [{"blocks": [{"text": "a", "tool_use": {"name": "Bash"}}]}]}, "exactly one of 'text'"),
        ({"turns": [{"when": {"tool_offered": "Bash"}}]}, "needs 'blocks', 'choose' or 'error'"),
        ({"turns": [{"blocks": [{"text": "a"}], "otherwise": [{"text": "b"}]}]}, "'otherwise' needs 'when'"),
        ({"turns": [{"when": {"request_matches": "("}, "blocks": [{"text": "a"}]}]}, "invalid regex"),
        ({"turns": [{"when": {}, "blocks": [{"text": "a"}]}]}, "at least one field"),
        ({"turns": [{"choose": [{"weight": 0, "blocks": [{"text": "a"}]}]}]}, r"choose\[0\]\.weight"),
        ({"turns": [{"error": {"kind": "server", "times": 0}}]}, r"error\.times"),
    ],
)
def test_malformed_turns_are_rejected_with_the_field(spec: dict[str, object], message: str) -> None:
    with pytest.raises(TaskError, match=message):
        load_script(spec)


def test_invalid_yaml_and_non_mapping_are_task_errors(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="invalid YAML"):
        load_script(write(tmp_path, "turns: [\n", "broken.yaml"))
    with pytest.raises(TaskError, match="must be a mapping"):
        load_script(write(tmp_path, "- a\n", "list.yaml"))


def test_every_field_is_documented() -> None:
    for model in (Script, Turn, Choice, ErrorSpec, When, Block, ToolUse):
        assert model.__doc__, model
        assert all(field.description for field in model.model_fields.values()), model
