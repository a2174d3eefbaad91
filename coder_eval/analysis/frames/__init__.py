"""Frames and loading: trajectories (and Inspect AI logs) in, the four pandas frames out.

The bottom layer of ``coder_eval.analysis``: ``columns`` declares the frames' columns as data,
``rows`` turns one trajectory into rows, ``inspect`` one Inspect AI log, and ``load`` gathers runs
into ``Runs``. Nothing here computes a statistic.
"""
