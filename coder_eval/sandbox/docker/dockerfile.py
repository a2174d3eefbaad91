"""What a Dockerfile says before it is built: the images it starts from, its final working directory.

Example::

    facts = read_dockerfile(Path("environment/Dockerfile"), args={"BASE": "coder-eval/base"})
    facts.bases      # ("coder-eval/base",): images every stage starts FROM (not earlier stages)
    facts.workdir    # "/app": the last WORKDIR of the final stage, None when it sets none

Read for two things: where a task's workspace is (the container's working directory, which Harbor
and Terminal-Bench tasks name as ``/app``), and which images must already be on this machine for
the build to run offline (``images.py`` refuses a task whose base is missing before anything runs).
Line continuations, comments, ``--platform=`` flags, ``AS`` stage names and ``ARG`` defaults (and
build arguments) in ``FROM`` lines are understood; parser directives and heredocs are not needed here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from coder_eval.errors import SandboxError

VARIABLE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?::?[-+][^}]*)?\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


class DockerfileFacts(NamedTuple):
    """What the harness reads from a Dockerfile (see the module docstring)."""

    bases: tuple[str, ...]
    workdir: str | None


def instructions(text: str) -> list[tuple[str, str]]:
    """(instruction in upper case, its arguments) for each instruction, continuations joined.

    Example: ``instructions("FROM a AS b\\nWORKDIR /app")`` ->
    ``[("FROM", "a AS b"), ("WORKDIR", "/app")]`` (a line ending in a backslash continues).
    """
    found: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        if whole:
            word, _, rest = whole.partition(" ")
            found.append((word.upper(), rest.strip()))
    if pending.strip():
        word, _, rest = pending.strip().partition(" ")
        found.append((word.upper(), rest.strip()))
    return found


def read_dockerfile(path: Path, args: Mapping[str, str] | None = None) -> DockerfileFacts:
    """The bases and final working directory of the Dockerfile at ``path`` (``SandboxError`` when it
    cannot be read); ``args`` are the build arguments, over the ``ARG`` defaults before ``FROM``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SandboxError(f"cannot read the Dockerfile {path}: {exc}") from exc
    given = dict(args or {})
    defaults: dict[str, str] = {}
    stages: set[str] = set()
    bases: list[str] = []
    workdir: str | None = None
    seen_from = False
    for word, rest in instructions(text):
        if word == "ARG" and not seen_from:
            name, _, value = rest.partition("=")
            defaults[name.strip()] = value.strip().strip("'\"")
        elif word == "FROM":
            seen_from = True
            image, stage = _from(rest, {**defaults, **given})
            if image.lower() not in stages and image != "scratch":
                bases.append(image)
            if stage:
                stages.add(stage.lower())
            workdir = None  # a stage starts from its base's working directory
        elif word == "WORKDIR" and rest:
            value = rest.strip().strip("'\"")
            workdir = value if value.startswith("/") else str(PurePosixPath(workdir or "/") / value)
    return DockerfileFacts(tuple(dict.fromkeys(bases)), workdir)


def _from(rest: str, variables: Mapping[str, str]) -> tuple[str, str | None]:
    """(the image, the stage name) of a ``FROM`` line's arguments."""
    words = [w for w in rest.split() if not w.startswith("--")]
    image = VARIABLE.sub(lambda m: variables.get(m["braced"] or m["bare"], ""), words[0]) if words else ""
    stage = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
    return image, stage
