"""Convert Terminal-Bench task folders to Harbor's layout with Harbor's own mapper. Runs in the harbor
venv (Python >= 3.12): ``python harbor_map.py SOURCE_DIR TARGET_DIR``.

Prints ``{"mapped": [task folder names], "failed": [[name, why], ...]}`` (the mapper's own notes go to
stderr).
"""

import contextlib
import json
import sys
from pathlib import Path

from harbor.mappers.terminal_bench import TerminalBenchMapper

with contextlib.redirect_stdout(sys.stderr):
    result = TerminalBenchMapper().map(Path(sys.argv[1]), Path(sys.argv[2]))
print(json.dumps({"mapped": [path.name for path in result.mapped], "failed": result.failed}))
