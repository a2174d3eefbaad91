"""The ``coder-eval`` command: run, plan, validate, report, show, view, regrade, export.

Each command's module is imported when that command is used (``coder_eval.cli.commands``), so
importing this package, ``--version`` and ``-h`` stay light.

Exit codes (``coder_eval.errors.ExitCode``): 0 success; 1 a gate failed (or, for ``validate``, a
task is broken); 2 invalid input; 3 a budget stopped the run (partial results kept); 4 a report
failed to render (the run is kept); 130 interrupted.
"""

from coder_eval.cli.app import app, main

__all__ = ["app", "main"]
