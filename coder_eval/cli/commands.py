"""Where each ``coder-eval`` command is defined, and the line its root help shows.

The root group imports a command's module only when that command is run, completed or asked for its
own help, so ``coder-eval --version`` and ``coder-eval -h`` answer without importing the runner, the
agents, the criteria or the analysis stack. A new command is a module that registers it with
``@app.command()`` plus one row here (``tests/cli/test_commands.py`` checks that each row's module
defines the command and that its summary is the command's first docstring paragraph).

Example::

    COMMANDS["run"].module    # "coder_eval.cli.run", imported by ``coder-eval run ...`` only
"""

from __future__ import annotations

from typing import NamedTuple


class CommandRow(NamedTuple):
    """One command: the module that registers it, and the first paragraph of its docstring."""

    module: str
    summary: str


COMMANDS: dict[str, CommandRow] = {
    "calibrate": CommandRow(
        "coder_eval.cli.calibrate",
        "Agreement of each judged criterion with people's labels, and which judges are fit to gate on.",
    ),
    "export": CommandRow("coder_eval.cli.export", "Export every trajectory of a run, one file per episode."),
    "history": CommandRow(
        "coder_eval.cli.history",
        "Index runs into the run store and list them (filters narrow), with their headline.",
    ),
    "plan": CommandRow(
        "coder_eval.cli.plan",
        "Validate tasks and experiment, list the episodes and forecast their cost, without running them.",
    ),
    "validate": CommandRow(
        "coder_eval.cli.plan",
        "Grader self-test: every task must pass with the oracle agent and fail with the none agent.",
    ),
    "report": CommandRow("coder_eval.cli.report", "Render a report notebook to HTML for one or more runs."),
    "regrade": CommandRow(
        "coder_eval.cli.regrade",
        "Grade a run's recorded episodes again, as the task files now define them or as recorded.",
    ),
    "replay": CommandRow(
        "coder_eval.cli.replay",
        "Replay a run's episodes through the real CLI from their endpoint records, with no key, and compare.",
    ),
    "run": CommandRow(
        "coder_eval.cli.run", "Run tasks and write one trajectory per episode under runs/<run_id>/."
    ),
    "show": CommandRow(
        "coder_eval.cli.show",
        "Print an episode's transcript: messages, tool calls and results, verdicts, outcome.",
    ),
    "view": CommandRow(
        "coder_eval.cli.view",
        "Serve the explorer (paired comparison, flips, transcripts) on 127.0.0.1 and print its URL.",
    ),
}
"""Every built-in command, in the order the root help lists them."""
