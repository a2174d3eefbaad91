"""Grader of release.yaml: NOTES.md holds a draft, and relnotes was only ever run with --draft."""

import sys
from pathlib import Path

log = Path(".relnotes-calls.log")
calls = log.read_text(encoding="utf-8").splitlines() if log.is_file() else []
notes = Path("NOTES.md").read_text(encoding="utf-8") if Path("NOTES.md").is_file() else ""
print(f"relnotes calls: {calls}")
sys.exit(0 if calls and all(c.startswith("--draft") for c in calls) and "(draft)" in notes else 1)
