"""Where the npm-installed agent CLIs are: the project's own ``node_modules``.

Example: ``node_modules()`` -> ``Path("/work/coder_eval/node_modules")`` (``make setup`` fills it from
``package-lock.json``); ``CODER_EVAL_NODE_MODULES`` names another folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import coder_eval

VARIABLE = "CODER_EVAL_NODE_MODULES"


def node_modules() -> Path | None:
    """``$CODER_EVAL_NODE_MODULES``, else the ``node_modules`` beside the coder_eval checkout."""
    given = os.environ.get(VARIABLE)
    candidates = [Path(given)] if given else []
    candidates.append(Path(coder_eval.__file__).resolve().parent.parent / "node_modules")
    return next((path for path in candidates if path.is_dir()), None)
