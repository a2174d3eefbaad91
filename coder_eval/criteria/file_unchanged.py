"""``file_unchanged``: protected files are byte-identical after the agent ran (the tamper check).

The sha256 of every file matching ``paths`` is taken before the agent starts and compared after:
an edit, a deletion, a rename, or a new file matching the globs fails the check. Links are never
followed: a protected file replaced by a link is a change, a new link an addition.

A protected Python source can also be bypassed without touching it, by a file Python imports in its
place: a package folder of the same name (``calc/core/__init__.py`` beside ``calc/core.py``) or an
extension module (``calc/core.cpython-311-x86_64-linux-gnu.so``). Such a file is an addition too,
whatever ``ignore`` says. The default ``ignore`` (Python's bytecode caches) hides nothing that can
shadow a source: the verifier never restores ``__pycache__``, ``*.pyc`` or ``.pytest_cache`` from
the agent's workspace, so no bytecode the agent wrote is ever loaded.

Example::

    - type: file_unchanged
      paths: ["tests/**", "pyproject.toml"]
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict
from coder_eval.sandbox.base import Sandbox, SandboxPath, file_glob, glob_regex


async def fingerprint(sandbox: Sandbox, patterns: list[str], ignore: list[str]) -> dict[str, str]:
    """``{relative path: sha256}`` of every regular file matching the globs, less ``ignore``.

    A symbolic link is recorded as ``link``, never followed: a protected file swapped for a link (to
    a file outside the workspace, say) is a change, and a new link is an addition.
    """
    hashes: dict[str, str] = {}
    for pattern in patterns:
        files = set(await sandbox.glob(pattern))
        for path in sorted(set(await sandbox.glob(pattern, include_links=True)) | files):
            if any(PurePosixPath(path).match(skip) for skip in ignore):
                continue
            if path not in files:
                hashes[path] = "link"
            else:
                hashes[path] = hashlib.sha256(await sandbox.read_file(path)).hexdigest()
    return {**hashes, **await shadows(sandbox, hashes)}


SHADOW_GLOBS = ("**/__init__.py", "**/*.so", "**/*.pyd")
"""Files Python imports before a ``name.py`` beside them: a package ``name/``, an extension module."""


async def shadows(sandbox: Sandbox, protected: Iterable[str]) -> dict[str, str]:
    """The files that would be imported instead of a protected Python source, each as
    ``shadows <source>``.

    Example: with ``calc/core.py`` protected, ``calc/core/__init__.py`` -> ``shadows calc/core.py``.
    """
    sources = {path[: -len(".py")] for path in protected if path.endswith(".py")}
    found: dict[str, str] = {}
    for pattern in SHADOW_GLOBS if sources else ():
        for path in await sandbox.glob(pattern, include_links=True):
            module = _module_of(path)
            if module in sources and path != f"{module}.py":
                found[path] = f"shadows {module}.py"
    return found


def _module_of(path: str) -> str:
    """``a/b/__init__.py`` -> ``a/b``; ``a/b.cpython-311-x86_64-linux-gnu.so`` -> ``a/b``."""
    folder, _, name = path.rpartition("/")
    if name == "__init__.py":
        return folder
    stem = name.split(".", 1)[0]
    return f"{folder}/{stem}" if folder else stem


class FileUnchanged(CriterionSpec):
    type: Literal["file_unchanged"] = "file_unchanged"
    paths: list[SandboxPath] = Field(min_length=1, description="Globs of protected files.")
    ignore: list[str] = Field(
        default_factory=lambda: ["__pycache__/*", "*.pyc"],
        description="Globs of files that may change (default: Python bytecode caches, never restored).",
    )

    async def prepare(self, sandbox: Sandbox) -> Any:
        return await fingerprint(sandbox, self.paths, self.ignore)

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        before: dict[str, str] = ctx.prepared or {}
        after = await fingerprint(ctx.sandbox, self.paths, self.ignore)
        for name in ctx.dropped:  # a link leading out, a device: never restored, still a change
            if any(glob_regex(file_glob(p)).fullmatch(name) for p in self.paths):
                after[name] = "left out (not a plain file)"
        changed = sorted(p for p in before.keys() & after.keys() if before[p] != after[p])
        removed = sorted(before.keys() - after.keys())
        added = sorted(after.keys() - before.keys())
        details = {"protected": len(before), "changed": changed, "removed": removed, "added": added}
        return Verdict(score=0.0 if changed or removed or added else 1.0, details=details)
