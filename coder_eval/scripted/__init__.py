"""A scripted model server speaking the Anthropic Messages API, for offline runs and tests.

Example::

    from coder_eval.scripted import ScriptedServer, load_script

    script = load_script("scripts/list_files.yaml", base_dir=task_dir)
    with ScriptedServer(script, seed=1234) as server:
        env = {**os.environ, **server.client_env()}    # ANTHROPIC_BASE_URL=server.base_url, ...
        subprocess.run([claude, "-p", "list files", ...], env=env)
        server.requests                                 # every request, with the turn that answered it

See docs/scripted.md for the script format and how turns are selected.
"""

from typing import TYPE_CHECKING

from coder_eval.lazy import lazy_names

if TYPE_CHECKING:
    from coder_eval.scripted.request_log import RecordedRequest
    from coder_eval.scripted.script import (
        Block,
        Choice,
        ErrorSpec,
        Script,
        ScriptRef,
        ToolUse,
        Turn,
        When,
        check_inline_script,
        load_script,
    )
    from coder_eval.scripted.server import ScriptedServer

LAZY: dict[str, str] = {
    "RecordedRequest": "coder_eval.scripted.request_log",
    **dict.fromkeys(
        [
            *("Block", "Choice", "ErrorSpec", "Script", "ScriptRef", "ToolUse", "Turn", "When"),
            *("check_inline_script", "load_script"),
        ],
        "coder_eval.scripted.script",
    ),
    "ScriptedServer": "coder_eval.scripted.server",
}
"""The public names (``__all__``), each imported from its module on first use: a task that names a
script loads the script's format without the server."""

if not TYPE_CHECKING:  # for the type checker the names are the imports above
    __getattr__, __dir__ = lazy_names(__name__, globals(), LAZY)

__all__ = [
    "Block",
    "Choice",
    "ErrorSpec",
    "RecordedRequest",
    "Script",
    "ScriptRef",
    "ScriptedServer",
    "ToolUse",
    "Turn",
    "When",
    "check_inline_script",
    "load_script",
]
