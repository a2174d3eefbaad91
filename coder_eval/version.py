"""The version of coder_eval: ``coder-eval --version``, the trajectory's ``episode_start.versions``,
the wheel's metadata (``pyproject.toml`` reads it from here), and the name it is installed by.

Example: ``from coder_eval.version import __version__`` -> ``"0.1.0"``;
``pip_install("dask")`` -> ``"pip install 'coder-eval-toolkit[dask]'"``.
"""

__version__ = "0.1.0"
"""``coder_eval.version``: one version, read by the package, the CLI and the wheel's metadata."""

DISTRIBUTION = "coder-eval-toolkit"
"""The distribution (what ``pip`` installs) whose import package is ``coder_eval``. The name
``coder-eval`` on PyPI belongs to another project; the console script stays ``coder-eval``."""


def pip_install(extra: str) -> str:
    """The command that adds an optional extra to an installed coder_eval.

    Example: ``pip_install("lab")`` -> ``"pip install 'coder-eval-toolkit[lab]'"``.
    """
    return f"pip install '{DISTRIBUTION}[{extra}]'"
