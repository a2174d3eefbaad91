"""Judging and calibration: agreement within a judge panel, and judges measured against people's
labels (``coder-eval calibrate``)."""
