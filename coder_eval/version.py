"""The version of coder_eval: ``coder-eval --version``, the trajectory's ``episode_start.versions``,
the wheel's metadata (``pyproject.toml`` reads it from here).

Example: ``from coder_eval.version import __version__`` -> ``"0.1.0"``.
"""

__version__ = "0.1.0"
