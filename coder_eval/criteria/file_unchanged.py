"""``file_unchanged``: protected files are byte-identical after the agent ran (the tamper check).

The sha256 of every file matching ``paths`` is taken before the agent starts and compared after:
an edit, a deletion, a rename, or a new file matching the globs fails the check. Links are compared
by their target, never followed.

Example::

    - type: file_unchanged
      paths: ["tests/**", "pyproject.toml"]
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from coder_eval.criteria.base import CriterionSpec, GradingContext, Verdict, file_glob
from coder_eval.sandbox.base import Sandbox, SandboxPath


def fingerprint(root: Path, patterns: list[str], ignore: list[str]) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``root`` matching the globs, less ``ignore``.

    A symbolic link is recorded as its target (``link:<target>``), never followed: a protected file
    swapped for a link (to a file outside the sandbox, say) is a change, and a new link is an addition.
    """
    resolved = root.resolve()
    hashes: dict[str, str] = {}
    for pattern in patterns:
        for path in sorted(resolved.glob(file_glob(pattern))):
            relative = path.relative_to(resolved)
            if any(relative.match(skip) for skip in ignore):
                continue
            if path.is_symlink():
                hashes[str(relative)] = f"link:{path.readlink()}"
            elif path.is_file():
                hashes[str(relative)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


class FileUnchanged(CriterionSpec):
    type: Literal["file_unchanged"] = "file_unchanged"
    paths: list[SandboxPath] = Field(min_length=1, description="Globs of protected files.")
    ignore: list[str] = Field(
        default_factory=lambda: ["__pycache__/*", "*.pyc"],
        description="Globs of files that may change (default: Python bytecode caches).",
    )

    async def prepare(self, sandbox: Sandbox) -> Any:
        return fingerprint(sandbox.root, self.paths, self.ignore)

    async def evaluate(self, ctx: GradingContext) -> Verdict:
        before: dict[str, str] = ctx.prepared or {}
        after = fingerprint(ctx.sandbox.root, self.paths, self.ignore)
        changed = sorted(p for p in before.keys() & after.keys() if before[p] != after[p])
        removed = sorted(before.keys() - after.keys())
        added = sorted(after.keys() - before.keys())
        details = {"protected": len(before), "changed": changed, "removed": removed, "added": added}
        return Verdict(score=0.0 if changed or removed or added else 1.0, details=details)
