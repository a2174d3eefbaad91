"""Harbor's scripts run in a coder_eval sandbox: container paths mapped into the workspace.

Example::

    command = verifier_command(Path("task/tests/test.sh").read_text(), workdir="/app", env={})
    script = oracle_script(Path("task/solution"), workdir="/app", env={})

Harbor runs ``tests/test.sh`` and ``solution/solve.sh`` in a container where the tests are at
``/tests``, the solution at ``/solution``, logs (and the reward file) under ``/logs``, and the task's
working directory at its ``WORKDIR``. Here those are folders of the sandbox: ``<workspace>/.harbor/``
holds ``tests`` (the hidden tests, copied in by the verifier only) and ``logs``; the solution goes to
a temporary folder of the agent's sandbox; the working directory is the workspace. Each script's
occurrences of those paths are rewritten, at load time to a placeholder and, when it runs, to the
sandbox's absolute path (so paths inside single quotes are mapped too). Other files (a
``test_outputs.py`` that opens ``/tests/...`` itself) are used as they are.
"""

from __future__ import annotations

import base64
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

ROOT = "__CODER_EVAL_HARBOR__"
"""Placeholder for the sandbox folder standing in for the container's root paths."""
WORKDIR = "__CODER_EVAL_WORKDIR__"
"""Placeholder for the workspace, standing in for the container's working directory."""
EOF_MARK = "CODER_EVAL_HARBOR_EOF"
HARBOR_DIR = ".harbor"
"""In the workspace: ``tests`` (verifier only), ``logs``, the mapped ``test.sh``."""
TESTS_MOUNT = f"{HARBOR_DIR}/tests"
REWARD_TXT = f"{HARBOR_DIR}/logs/verifier/reward.txt"
REWARD_JSON = f"{HARBOR_DIR}/logs/verifier/reward.json"
CONTAINER_ROOTS = ("tests", "solution", "logs")
MAX_SOLUTION_BYTES = 1_000_000
"""Solution folders up to this size are inlined in the oracle's script (it is recorded as a tool call)."""


def map_paths(script: str, workdir: str | None) -> str:
    """``script`` with Harbor's container paths replaced by placeholders.

    Example: ``map_paths("pytest /tests/t.py > /logs/verifier/out", None)`` ->
    ``"pytest __CODER_EVAL_HARBOR__/tests/t.py > __CODER_EVAL_HARBOR__/logs/verifier/out"``
    """
    roots = "|".join(CONTAINER_ROOTS)
    mapped = re.sub(rf"(?<![\w.~/$-])/({roots})(?![\w.-])", rf"{ROOT}/\1", script)
    if workdir and workdir.strip("/"):
        path = re.escape("/" + workdir.strip("/"))
        mapped = re.sub(rf"(?<![\w.~/$-]){path}(?![\w.-])", WORKDIR, mapped)
    return mapped


def _write_mapped(script: str, target: str, workdir: str | None) -> str:
    """Shell lines writing ``script`` (mapped) to ``target`` with the placeholders filled in."""
    fill = f'sed -e "s#{ROOT}#$root#g" -e "s#{WORKDIR}#$PWD#g"'
    return f"{fill} > {target} <<'{EOF_MARK}'\n{map_paths(script, workdir).rstrip()}\n{EOF_MARK}"


def _exports(env: Mapping[str, str]) -> list[str]:
    return [f"export {name}={shlex.quote(value)}" for name, value in env.items()]


def verifier_command(test_script: str, *, workdir: str | None, env: Mapping[str, str]) -> str:
    """The verifier's command: fresh logs, the mapped ``test.sh`` written and run from the workspace."""
    lines = [
        f'root="$PWD/{HARBOR_DIR}"',
        'rm -rf "$root/logs" && mkdir -p "$root/logs/verifier" "$root/logs/agent" "$root/logs/artifacts"',
        _write_mapped(test_script, '"$root/test.sh"', workdir),
        *_exports(env),
        'bash "$root/test.sh"',
    ]
    return "\n".join(lines) + "\n"


def solution_files(solution: Path) -> dict[str, bytes] | None:
    """Every file of the solution folder by relative path; None when it is too big to inline."""
    files = {
        p.relative_to(solution).as_posix(): p.read_bytes() for p in sorted(solution.rglob("*")) if p.is_file()
    }
    return files if sum(map(len, files.values())) <= MAX_SOLUTION_BYTES else None


def oracle_script(files: Mapping[str, bytes], *, workdir: str | None, env: Mapping[str, str]) -> str:
    """The oracle's one step: the solution folder written to a temporary folder, then ``solve.sh``
    (mapped) run from the workspace. No blank line outside a heredoc, so the oracle runs it whole."""
    lines = ['root="$(mktemp -d)"', 'mkdir -p "$root/logs/agent"']
    for name, data in files.items():
        target = shlex.quote(f"solution/{name}")
        lines.append(f'mkdir -p "$(dirname "$root"/{target})"')
        if name == "solve.sh":
            lines.append(_write_mapped(data.decode("utf-8", errors="replace"), f'"$root"/{target}', workdir))
        else:
            encoded = base64.encodebytes(data).decode("ascii").rstrip()
            lines.append(f"base64 -d > \"$root\"/{target} <<'{EOF_MARK}'\n{encoded}\n{EOF_MARK}")
    lines += [*_exports(env), 'bash "$root/solution/solve.sh"']
    return "\n".join(lines) + "\n"
