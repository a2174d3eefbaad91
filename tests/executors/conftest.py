"""The in-process CLI and the report stand-in of the CLI tests, for the executor tests."""

from tests.test_cli import invoke, reports

__all__ = ["invoke", "reports"]
