"""Experiment files; ``default.yaml`` ships as ``coder_eval.experiments`` (package data)."""
