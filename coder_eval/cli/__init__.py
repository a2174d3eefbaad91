"""The ``coder-eval`` command: run, plan, validate, report, show, view, regrade, export.

Exit codes (``coder_eval.errors.ExitCode``): 0 success; 1 a gate failed (or, for ``validate``, a
task is broken); 2 invalid input; 3 a budget stopped the run (partial results kept); 4 a report
failed to render (the run is kept); 130 interrupted.
"""

import coder_eval.cli.export
import coder_eval.cli.plan
import coder_eval.cli.regrade
import coder_eval.cli.report
import coder_eval.cli.run
import coder_eval.cli.show
import coder_eval.cli.view  # noqa: F401  (each module registers its commands on the app)
from coder_eval.cli.app import app, main

__all__ = ["app", "main"]
