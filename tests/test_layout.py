"""Tests mirror the package: ``coder_eval/a/b.py`` is tested in ``tests/a/test_b.py`` (a package's
``__init__.py`` in ``tests/a/test_init.py``, a top-level module ``coder_eval/x.py`` in
``tests/test_x.py``).

A module without its mirror needs an entry in ``WITHOUT_OWN_TEST`` saying why: which test exercises
it instead (each entry names at least one test file, and that file must exist), or that it has none
yet. An entry whose module has gained its test, or no longer exists, fails too, so the list only
shrinks honestly. The failure prints the modules to add or drop, ready to paste.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "coder_eval"

WITHOUT_OWN_TEST: dict[str, str] = {
    # packages whose __init__ is a table or re-exports, tested where the table is used
    "__init__.py": "re-exports; tests/test_public_api.py checks the exported names and their lazy import",
    "__main__.py": "two lines; every CLI test runs `python -m coder_eval` (tests/cli/test_app.py)",
    "agents/__init__.py": (
        "the agent table; tested through tests/agents/test_spec.py and tests/test_plugins.py"
    ),
    "agents/codex/__init__.py": "re-exports; tests/agents/test_cli_agents.py",
    "agents/gemini/__init__.py": "re-exports; tests/agents/test_cli_agents.py",
    "agents/opencode/__init__.py": "re-exports; tests/agents/test_cli_agents.py",
    "criteria/judges/__init__.py": "a docstring; the judges are tested in tests/criteria/judges/",
    "episode/__init__.py": "a docstring; the recipe runs in tests/episode/test_runner.py",
    "endpoint/__init__.py": "a docstring; the record is tested in tests/endpoint/test_check.py",
    "executors/__init__.py": "the executor table; tested through tests/executors/dask/test_executor.py",
    "experiment/__init__.py": "re-exports; tests/experiment/test_resolve.py",
    "interop/__init__.py": "re-exports; tests/analysis/frames/test_inspect.py",
    "interop/exporters/__init__.py": "a docstring; tests/interop/exporters/test_atif_export.py",
    "interop/log_readers/__init__.py": "a docstring; tests/analysis/frames/test_inspect.py",
    "interop/task_readers/__init__.py": "a docstring; tests/interop/task_readers/test_harbor.py",
    "regrade/__init__.py": "re-exports; tests/regrade/test_run.py",
    "sandbox/__init__.py": "the driver table; tested through tests/sandbox/test_drivers.py",
    "sandbox/docker/__init__.py": "a docstring; the driver is tested in tests/sandbox/docker/",
    "task/__init__.py": "re-exports; tests/task/test_loading.py",
    "price_table.py": "tested through tests/test_pricing.py (the table, registration, anti-shadow)",
    "analysis/answer/__init__.py": "a docstring; the layer is tested in tests/analysis/answer/",
    "analysis/frames/__init__.py": "a docstring; the layer is tested in tests/analysis/frames/",
    "analysis/judging/__init__.py": "a docstring; the layer is tested in tests/analysis/judging/",
    "analysis/stats/__init__.py": "a docstring; the layer is tested in tests/analysis/stats/",
    "analysis/views/__init__.py": "a docstring; the layer is tested in tests/analysis/views/",
    "executors/dask/__init__.py": "a docstring; the executor is tested in tests/executors/dask/",
    "task/simulation.py": (
        "fields validated in tests/episode/test_simulator.py and tests/experiment/test_merge.py"
    ),
    "scripted/__init__.py": "re-exports; tests/scripted/test_server.py",
    # agents: each kind is run end to end through its real CLI
    "agents/base.py": "the agent seam (types); every agent test uses it, e.g. tests/agents/test_events.py",
    "agents/claude_code/agent.py": (
        "no test of its own; the real CLI runs it in tests/agents/test_claude_code.py"
    ),
    "agents/claude_code/dialog.py": (
        "no test of its own; dialog tasks run it in tests/episode/test_simulator.py"
    ),
    "agents/claude_code/launcher.py": "tested through tests/agents/claude_code/test_environment.py",
    "agents/claude_code/spec.py": "fields validated in tests/agents/test_spec.py",
    "agents/cli_agent.py": "the shared CLI agent run; tested through tests/agents/test_cli_agents.py",
    "agents/cli_spec.py": "fields validated in tests/agents/test_spec.py",
    "agents/codex/agent.py": "no test of its own; the real CLI runs it in tests/agents/test_cli_agents.py",
    "agents/codex/home.py": "no test of its own; exercised by tests/agents/test_cli_agents.py",
    "agents/codex/spec.py": "fields validated in tests/agents/test_spec.py",
    "agents/command.py": "no test of its own; tests/agents/test_command_events.py runs command agents",
    "agents/command_spec.py": "fields validated in tests/agents/test_spec.py",
    "agents/event_streams.py": "tested through tests/agents/test_command_events.py (both stream formats)",
    "agents/gemini/agent.py": "no test of its own; the real CLI runs it in tests/agents/test_cli_agents.py",
    "agents/gemini/home.py": "no test of its own; exercised by tests/agents/test_cli_agents.py",
    "agents/gemini/spec.py": "fields validated in tests/agents/test_spec.py",
    "agents/node_cli.py": "one lookup; exercised by tests/agents/test_cli_agents.py",
    "agents/none.py": "does nothing; tests/run/test_validate.py runs it against every example task",
    "agents/opencode/skills.py": "tested through tests/episode/test_skill_record.py (skills opencode loaded)",
    "agents/opencode/spec.py": (
        "fields validated in tests/agents/test_spec.py and tests/agents/opencode/test_home.py"
    ),
    "agents/oracle.py": (
        "no test of its own; tests/run/test_validate.py and tests/interop/task_readers/test_harbor.py"
    ),
    "agents/skill_sources.py": "tested through tests/episode/test_skill_offer.py",
    # analysis: frames and methods tested through the public functions that use them
    "analysis/stats/comparison.py": "tested through tests/analysis/stats/test_compare.py",
    "analysis/frames/columns.py": "tested through tests/analysis/frames/test_load.py",
    "analysis/answer/completion.py": "tested through tests/run/test_gates.py",
    "analysis/views/explorer.py": (
        "no test of its own; the explorer renders it in tests/test_explore_browser.py"
    ),
    "analysis/frames/rows.py": (
        "no test of its own; the frames are read in tests/analysis/frames/test_load.py"
    ),
    "analysis/stats/metrics.py": (
        "tested through tests/analysis/stats/test_compare.py and tests/analysis/test_init.py"
    ),
    "analysis/stats/multiplicity.py": "tested through tests/analysis/stats/test_compare.py",
    "analysis/stats/paired.py": (
        "tested through tests/analysis/stats/test_compare.py and tests/analysis/stats/test_inversion.py"
    ),
    "analysis/answer/planning.py": "tested through tests/analysis/stats/test_power.py",
    "analysis/stats/power_model.py": "tested through tests/analysis/stats/test_power.py",
    "analysis/answer/engine.py": "tested through tests/test_one_answer.py (one verdict on every surface)",
    "analysis/answer/wording.py": "tested through tests/analysis/views/test_notebook.py",
    # the command line: each command through its subprocess
    "cli/__init__.py": "two names; tests/cli/test_commands.py",
    "cli/export.py": "tested through tests/interop/exporters/test_atif_export.py",
    "cli/inputs.py": "tested through tests/test_cli.py and tests/experiment/test_overrides.py",
    "cli/run_options.py": "option types only; tested through tests/test_cli.py",
    "episode/plan.py": "tested through tests/episode/test_runner.py and tests/episode/test_simulator.py",
    "experiment/inputs.py": "tested through tests/run/test_session.py and tests/test_cli.py",
    "run/__init__.py": "re-exports; tests/run/test_session.py imports the session through it",
    "run/batch.py": "tested through tests/episode/test_runner.py (run_batch) and tests/run/test_resume.py",
    "run/execute.py": "tested through tests/run/test_session.py and tests/run/test_resume.py",
    "run/finish.py": "tested through tests/run/test_result.py and tests/test_one_answer.py",
    "run/reports.py": "tested through tests/run/test_session.py and tests/run/test_render.py",
    "cli/plan.py": "tested through tests/test_cli.py and tests/run/test_validate.py",
    "cli/report.py": (
        "tested through tests/test_cli.py, tests/run/test_render.py and tests/cli/test_history.py"
    ),
    # the run store
    "analysis/judging/labels.py": (
        "the labels file; tested through tests/analysis/judging/test_calibration.py"
    ),
    "cli/history_tasks.py": "printing only; tested through tests/cli/test_history.py (history --tasks)",
    "store/__init__.py": "re-exports; tests/store/test_index.py imports through it",
    "store/schema.py": "the tables; tested through tests/store/test_index.py",
    "cli/run.py": "tested through tests/test_cli.py, tests/run/test_resume.py and tests/test_run_lock.py",
    "cli_match.py": "tested through tests/criteria/test_cli_called.py",
    # criteria
    "criteria/judges/agent_session.py": "tested through tests/criteria/judges/test_agent.py",
    "criteria/judges/evidence.py": (
        "tested through tests/criteria/judges/test_llm.py and tests/test_untrusted_json.py"
    ),
    "criteria/file_exists.py": (
        "no test of its own; tasks check files with it in tests/test_cli.py and tests/sandbox/test_limits.py"
    ),
    "criteria/flags.py": "tested through tests/criteria/test_base.py",
    "criteria/hidden_tests.py": "tested through tests/criteria/test_expected_tests.py and tests/security/",
    "criteria/judges/context.py": "no test of its own; tests/criteria/judges/test_llm.py",
    "criteria/judges/workspace.py": "tested through tests/criteria/judges/test_agent.py",
    "criteria/judges/panel.py": "no test of its own; the judges' tests/criteria/judges/test_llm.py",
    "criteria/suite_metrics.py": "tested through tests/run/test_gates.py",
    # executors
    "executors/base.py": "the executor protocol (types); tests/executors/dask/test_executor.py",
    "executors/local.py": "no test of its own; every run without --executor uses it (tests/test_cli.py)",
    "executors/dask/worker.py": (
        "the dask executor's worker side; tests/executors/dask/test_executor.py, "
        "tests/executors/test_worker_loss.py, "
        "tests/executors/dask/test_live_lines.py and tests/executors/test_separate_hosts.py run it on workers"
    ),
    # experiment, interop, regrade
    "experiment/paths.py": "tested through tests/experiment/test_spec.py",
    "experiment/rephrase.py": "tested through tests/experiment/test_mutations.py",
    "experiment/task_selection.py": "tested through tests/task/test_rows.py",
    "interop/exporters/atif_steps.py": "tested through tests/interop/exporters/test_atif.py",
    "interop/log_readers/inspect_scores.py": "tested through tests/analysis/frames/test_inspect.py",
    "regrade/before.py": "no test of its own; tests/regrade/test_run.py",
    "regrade/episode.py": "tested through tests/regrade/test_run.py",
    # the episode and the run
    "errors.py": "error types and exit codes; every test of bad input, e.g. tests/task/test_loading.py",
    "task/limits.py": "tested through tests/episode/test_watch.py",
    "run/render_files.py": "tested through tests/run/test_render.py",
    "run/stop.py": "tested through tests/test_run_write_faults.py",
    "episode/stage.py": "no test of its own; every episode stages its agent (tests/episode/test_runner.py)",
    "task/sources.py": "tested through tests/task/test_loading.py (a missing file is named with its line)",
    "task/files.py": "tested through tests/run/test_resume.py (a changed task refuses --resume)",
    "sandbox/template_files.py": "tested through tests/episode/test_pristine.py",
    "episode/verifier.py": (
        "no test of its own; graders run in it in tests/episode/test_grading.py and tests/security/"
    ),
    "cli/viewer.py": "tested through tests/cli/test_view.py and tests/test_explore_browser.py",
    # sandboxes
    "sandbox/base.py": "the sandbox seam; tested through tests/sandbox/test_drivers.py",
    "sandbox/cgroups.py": "tested through tests/sandbox/test_limits.py",
    "sandbox/docker/container.py": "tested through tests/sandbox/test_limits.py",
    "sandbox/docker/spec.py": "fields validated in tests/sandbox/docker/test_driver.py",
    "sandbox/docker/engine.py": "tested through tests/sandbox/docker/test_driver.py",
    "sandbox/environment.py": "tested through tests/sandbox/test_envs.py",
    "sandbox/docker/helper.py": (
        "no test of its own; the docker driver runs it in tests/sandbox/docker/test_driver.py"
    ),
    "sandbox/docker/images.py": "tested through tests/sandbox/docker/test_driver.py",
    "sandbox/local.py": (
        "no test of its own; every driver's tests build on it (tests/sandbox/test_drivers.py)"
    ),
    "sandbox/docker/rootfs.py": "tested through tests/sandbox/docker/test_base_image.py",
    "sandbox/spec.py": "fields validated in tests/sandbox/test_drivers.py",
    "sandbox/toolchain.py": (
        "tested through tests/sandbox/test_layout.py and tests/security/test_grader_attacks.py"
    ),
    # the scripted model server
    "scripted/calls.py": "tested through tests/scripted/test_dialects.py",
    "scripted/dialect.py": "tested through tests/scripted/test_dialects.py",
    "scripted/gemini.py": "tested through tests/scripted/test_dialects.py",
    "scripted/handler.py": "tested through tests/scripted/test_server.py",
    "scripted/openai_responses.py": "tested through tests/scripted/test_dialects.py",
    "scripted/replay.py": "tested through tests/scripted/test_turns.py",
    "scripted/request_log.py": "tested through tests/scripted/test_server.py",
    "scripted/response.py": "tested through tests/scripted/test_dialects.py",
    "scripted/skills.py": "tested through tests/scripted/test_dialects.py",
}
"""Modules (relative to ``coder_eval/``) without a mirroring test file, and why."""

TEST_PATH = re.compile(r"tests/[\w/]+(?:\.py|/)")


def mirror(module: Path) -> Path:
    """The test file that mirrors ``module`` (a path under ``coder_eval/``)."""
    relative = module.relative_to(PACKAGE)
    name = "init" if relative.name == "__init__.py" else relative.stem
    return REPO / "tests" / relative.parent / f"test_{name}.py"


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_has_a_mirroring_test_or_says_why_not() -> None:
    untested = [str(m.relative_to(PACKAGE)) for m in modules() if not mirror(m).exists()]
    missing = [name for name in untested if name not in WITHOUT_OWN_TEST]
    assert not missing, (
        "modules with no test file mirroring them: add tests/<same path>/test_<module>.py, or an entry in "
        "WITHOUT_OWN_TEST saying which test exercises it:\n"
        + "\n".join(f'    "{name}": "...",  # {mirror(PACKAGE / name).relative_to(REPO)}' for name in missing)
    )


def test_the_allowlist_names_only_modules_still_without_their_test() -> None:
    gone = [name for name in WITHOUT_OWN_TEST if not (PACKAGE / name).exists()]
    tested = [name for name in WITHOUT_OWN_TEST if name not in gone and mirror(PACKAGE / name).exists()]
    stale = [f"{name}: no such module" for name in gone]
    stale += [f"{name}: has {mirror(PACKAGE / name).relative_to(REPO)}" for name in tested]
    assert not stale, "drop these from WITHOUT_OWN_TEST:\n" + "\n".join(stale)


def test_each_reason_names_test_files_that_exist() -> None:
    for name, reason in WITHOUT_OWN_TEST.items():
        named = TEST_PATH.findall(reason)
        assert named, f"{name}: the reason names no test file: {reason!r}"
        for path in named:
            assert (REPO / path).exists(), f"{name}: {path} does not exist"


def test_the_mirror_convention() -> None:
    assert mirror(PACKAGE / "sandbox" / "docker.py") == REPO / "tests" / "sandbox" / "test_docker.py"
    assert mirror(PACKAGE / "analysis" / "__init__.py") == REPO / "tests" / "analysis" / "test_init.py"
    assert mirror(PACKAGE / "task.py") == REPO / "tests" / "test_task.py"


def test_contributing_draws_every_package_folder_and_only_those() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    tree = text.split("## Layout", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    drawn: set[str] = set()
    parents: list[str] = []
    for line in tree.splitlines()[1:]:
        head = re.split(r"\s{2,}", line.strip())[0]
        if not line.startswith("  ") or not re.fullmatch(r"(\w+/ ?)+", head):
            continue  # the root, or a description's second line
        depth = (len(line) - len(line.lstrip())) // 2 - 1
        names = re.findall(r"(\w+)/", head)
        parents[depth:] = [names[0]]
        drawn.update("/".join([*parents[:depth], name]) for name in names)
    folders = {
        str(path.parent.relative_to(PACKAGE))
        for path in PACKAGE.rglob("__init__.py")
        if path.parent != PACKAGE
    }

    assert folders - drawn == set(), "folders missing from CONTRIBUTING.md's layout"
    assert drawn - folders == set(), "folders drawn in CONTRIBUTING.md's layout that do not exist"


def test_the_files_run_first_exist() -> None:
    from tests.conftest import FIRST

    assert [name for name in FIRST if not (REPO / name).is_file()] == []
    assert len(set(FIRST)) == len(FIRST)
