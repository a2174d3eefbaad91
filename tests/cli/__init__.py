"""Tests of coder_eval.cli, module by module."""
