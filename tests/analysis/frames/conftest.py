"""Real Inspect AI logs, written once per session by Inspect's own ``eval``
(``tests/interop/inspect_eval.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Model name -> its ``.eval`` log, from one offline eval of the ``arith`` task."""
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed: pip install -e '.[inspect]'")
    root = tmp_path_factory.mktemp("inspect")
    env = {**os.environ, "XDG_DATA_HOME": str(root / "data"), "INSPECT_LOG_DIR": str(root / "unused")}
    done = subprocess.run(
        [sys.executable, "-m", "tests.interop.inspect_eval", str(root / "logs")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    paths = [Path(line) for line in done.stdout.split()]
    from inspect_ai.log import read_eval_log

    return {read_eval_log(str(p), header_only=True).eval.model: p for p in paths}
