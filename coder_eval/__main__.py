"""``python -m coder_eval`` is the ``coder-eval`` command."""

from coder_eval.cli import main

main()
