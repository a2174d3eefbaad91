"""Model judges: ``panel`` (the fields every judge has and the vote), ``llm`` (a rubric), ``baseline``
(against a reference run) and ``agent`` (a read-only Claude Code agent; one run in ``agent_session``,
its workspace in ``workspace``); ``context`` and ``evidence`` are what a judge is shown."""

from coder_eval.lazy import without_iri_format

without_iri_format()  # before agent_session imports claude-agent-sdk, which imports jsonschema: 1 s less
