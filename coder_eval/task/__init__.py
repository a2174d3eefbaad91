"""Task files: the YAML a suite author writes, validated once at load time.

Example (``tasks/examples/hello.yaml``)::

    task_id: hello
    initial_prompt: Write "hello" to hello.txt
    reference_solution: echo hello > hello.txt
    success_criteria:
      - type: file_contains
        path: hello.txt
        includes: [hello]

``load_tasks([Path("tasks/examples")])`` returns one ``TaskSpec`` per task (one per dataset row
for dataset tasks). Every problem is a ``TaskError`` naming the file, line and field.

``schema``: ``TaskSpec`` and its blocks; ``loading``: sources found and read by format (``READERS``),
validated and fanned out; ``sources``: the files a validated task names, read and checked.
"""

from coder_eval.agents import AgentSpec
from coder_eval.sandbox import SandboxSpec
from coder_eval.sandbox.base import check_sandbox_path
from coder_eval.task.limits import RunLimits
from coder_eval.task.loading import READERS, build_tasks, deep_merge, discover, load_tasks, task_doc
from coder_eval.task.schema import (
    TASK_FIELDS,
    TASK_ID,
    Command,
    HiddenTests,
    Identifier,
    Reference,
    ReferenceFile,
    ReferenceFolder,
    Retry,
    TaskSpec,
    check_id,
)

__all__ = [
    "READERS",
    "TASK_FIELDS",
    "TASK_ID",
    "AgentSpec",
    "Command",
    "HiddenTests",
    "Identifier",
    "Reference",
    "ReferenceFile",
    "ReferenceFolder",
    "Retry",
    "RunLimits",
    "SandboxSpec",
    "TaskSpec",
    "build_tasks",
    "check_id",
    "check_sandbox_path",
    "deep_merge",
    "discover",
    "load_tasks",
    "task_doc",
]
