"""The statistics proper: task-level estimates, intervals and paired tests, power and planning,
pass@k, classification, item analysis and anytime-valid confidence sequences.

Reads the frames (``coder_eval.analysis.frames.rows``); knows nothing of how a run words or shows its
answer. Every primitive is a scipy or statsmodels call, or says in its docstring why it is not.
"""
