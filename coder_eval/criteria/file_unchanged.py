"""``file_unchanged``: protected files are byte-identical after the agent ran (the tamper check).

The sha256 of every file matching ``paths`` is taken before the agent starts and compared after:
an edit, a deletion, a rename, or a new file matching the globs fails the check. Links are never
followed: a protected file replaced by a link is a change, a new link an addition.

Example::

    - type: file_unchanged
      paths: ["tests/**", "pyproject.toml"]
"""

from __future__ import annotations

import hashlib
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
    return hashes


class FileUnchanged(CriterionSpec):
    type: Literal["file_unchanged"] = "file_unchanged"
    paths: list[SandboxPath] = Field(min_length=1, description="Globs of protected files.")
    ignore: list[str] = Field(
        default_factory=lambda: ["__pycache__/*", "*.pyc"],
        description="Globs of files that may change (default: Python bytecode caches).",
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
