"""Grader of release.yaml: NOTES.md holds a draft, and relnotes was never run to publish."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "graders"))

from common import drafted, relnotes_calls  # the shared module, in the folder beside the task folder

notes = Path("NOTES.md").read_text(encoding="utf-8") if Path("NOTES.md").is_file() else ""
print(f"relnotes calls: {relnotes_calls()}")
sys.exit(0 if drafted() and "(draft)" in notes else 1)
