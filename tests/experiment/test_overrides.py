"""``-D path=value``: YAML values, schema-checked paths with did-you-mean, and the shortcuts."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import ExperimentError
from coder_eval.experiment import CommandLine, overrides_layer, parse_define
from tests.helpers import coder_eval, minimal_task


@pytest.mark.parametrize(
    ("define", "expected"),
    [
        ("run_limits.max_turns=5", ("run_limits.max_turns", 5)),
        ("run_limits.task_timeout=2.5", ("run_limits.task_timeout", 2.5)),
        ("agent.allowed_tools=[Read, Edit]", ("agent.allowed_tools", ["Read", "Edit"])),
        ("agent.env.DEBUG=1", ("agent.env.DEBUG", "1")),
        ("agent.model=3.5", ("agent.model", "3.5")),
        ("sandbox.network=false", ("sandbox.network", False)),
        ("sandbox.network=none", ("sandbox.network", "none")),
        ("agent.system_prompt=", ("agent.system_prompt", "")),
        ("tags=[smoke]", ("tags", ["smoke"])),
    ],
)
def test_values_are_yaml_checked_against_the_field(define: str, expected: tuple[str, object]) -> None:
    assert parse_define(define) == expected


def test_layer_nests_paths_and_later_ones_win() -> None:
    layer = overrides_layer(["agent.model=a", "run_limits.max_turns=3", "agent.model=b", "agent.env.X=y"])
    assert layer == {"agent": {"model": "b", "env": {"X": "y"}}, "run_limits": {"max_turns": 3}}


@pytest.mark.parametrize(
    ("define", "message"),
    [
        ("agent.modle=x", "unknown field agent.modle (did you mean 'agent.model'?)"),
        ("run_limit.max_turns=3", "unknown field run_limit (did you mean 'run_limits'?)"),
        ("sandbox.templat_sources=[]", "did you mean 'sandbox.template_sources'?"),
        ("source_path=/x", "unknown field source_path"),
    ],
)
def test_unknown_paths_suggest(define: str, message: str) -> None:
    with pytest.raises(ExperimentError, match="-D ") as caught:
        parse_define(define)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("define", "message"),
    [
        ("run_limits.task_timeout=soon", "-D run_limits.task_timeout=soon: Input should be a valid number"),
        ("run_limits.max_turns=0", "greater than or equal to 1"),
        ("agent.model.name=x", "agent.model has no sub-fields"),
        ("agent.model", "expected path=value"),
        ("sandbox.driver=podman", "Input should be 'auto', 'tempdir', 'bwrap' or 'docker'"),
    ],
)
def test_bad_values_and_shapes(define: str, message: str) -> None:
    with pytest.raises(ExperimentError) as caught:
        parse_define(define)
    assert message in str(caught.value)


def test_shortcuts_and_defines_of_other_fields_combine() -> None:
    layer = CommandLine(
        defines=("agent.max_turns=3", "sandbox.network=none"), model="m", agent="oracle"
    ).layer()
    assert layer == {
        "agent": {"max_turns": 3, "model": "m", "type": "oracle"},
        "sandbox": {"network": "none"},
    }


@pytest.mark.parametrize(
    ("command_line", "message"),
    [
        (
            CommandLine(defines=("agent.model=x",), model="m"),
            "agent.model is set both by --model and by -D agent.model",
        ),
        (
            CommandLine(defines=("agent.kind=none",), agent="oracle"),
            "agent.type is set both by --agent and by -D agent.type",
        ),
        (
            CommandLine(defines=("sandbox.driver=bwrap",), driver="tempdir"),
            "by --driver and by -D sandbox.driver",
        ),
        (
            CommandLine(defines=("agent={model: x}",), model="m"),
            "agent.model is set both by --model and by -D agent=",
        ),
    ],
)
def test_a_shortcut_and_a_define_on_one_field_is_an_error(command_line: CommandLine, message: str) -> None:
    with pytest.raises(ExperimentError, match=message.replace(".", r"\.")):
        command_line.layer()


def test_unknown_agent_kind_is_rejected_with_a_suggestion() -> None:
    with pytest.raises(ExperimentError, match="did you mean 'oracle'"):
        CommandLine(agent="orcale").layer()


def test_the_original_option_names_and_the_conflict_on_the_command_line(tmp_path: Path) -> None:
    path = minimal_task(tmp_path / "tasks")

    typed = coder_eval(
        "plan",
        str(path),
        "--type",
        "oracle",
        "-m",
        "claude-haiku-4-5",
        "--set",
        "run_limits.max_turns=3",
        cwd=tmp_path,
    )
    both = coder_eval("plan", str(path), "-T", "none", "-D", "agent.kind=oracle", cwd=tmp_path)

    assert typed.returncode == 0, typed.stderr
    assert "oracle" in typed.stdout
    assert both.returncode == 2
    assert "agent.type is set both by --agent and by -D agent.type=...; give it once" in both.stderr
