"""coder_eval: evaluate AI coding agents on task suites, with honest paired statistics."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
