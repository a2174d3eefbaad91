"""file_unchanged: protected files byte-identical, and nothing imported in a protected source's place."""

from __future__ import annotations

import asyncio
from pathlib import Path

from coder_eval.criteria import GradingContext
from coder_eval.sandbox import FakeSandbox
from tests.criteria.builders import criterion, evaluate

PROTECTED = {"type": "file_unchanged", "paths": ["calc/*.py"]}
TEMPLATE = {"calc/__init__.py": "", "calc/core.py": "def add(a, b): return a + b\n"}


def changes(after: dict[str, str]) -> dict[str, object]:
    spec = criterion(PROTECTED)
    before = asyncio.run(spec.prepare(FakeSandbox(TEMPLATE)))
    ctx = GradingContext(sandbox=FakeSandbox(after), events=[], task_dir=Path.cwd(), prepared=before)
    verdict = evaluate(spec, ctx)
    return {k: verdict.details[k] for k in ("changed", "removed", "added")} | {"score": verdict.score}


def test_untouched_sources_and_their_bytecode_caches_pass() -> None:
    after = {**TEMPLATE, "calc/__pycache__/core.cpython-311.pyc": "forged", "calc/core.pyc": "forged"}

    assert changes(after) == {"changed": [], "removed": [], "added": [], "score": 1.0}


def test_a_package_or_an_extension_module_shadowing_a_protected_source_is_an_addition() -> None:
    after = {**TEMPLATE, "calc/core/__init__.py": "", "calc/core.cpython-311-x86_64-linux-gnu.so": "\x7fELF"}

    assert changes(after)["added"] == ["calc/core.cpython-311-x86_64-linux-gnu.so", "calc/core/__init__.py"]
    assert changes(after)["score"] == 0.0


def test_an_edit_is_a_change() -> None:
    assert changes({**TEMPLATE, "calc/core.py": "def add(a, b): return 5\n"})["changed"] == ["calc/core.py"]
