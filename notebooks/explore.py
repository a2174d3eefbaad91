# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Explore runs
#
# Pick one or more runs, the two variants to compare, a metric (or all of them) and a task tag. The table
# shows the paired comparison *candidate − baseline* on the tasks both variants ran, with its 95 %
# interval, p-value, verdict and method; the forest plot shows the same intervals (green or red: a called
# difference, grey: inconclusive). Below are the tasks whose pass rate flipped between the two variants,
# and the transcript of any episode of either variant (episodes of flipped tasks are listed first).
#
# To compare two runs (a change against the run before it), pick the run and a *baseline run*: each
# variant is compared with the baseline run's variant of the same id, as `coder-eval run --baseline`
# compares them.
#
# This needs a live kernel (JupyterLab or Voila); the static reports (`coder-eval report`) are complete
# without it.

# %% tags=["parameters"]
runs: str = "../runs"  # a folder of runs, or run directories, comma-separated

# %%
from coder_eval.analysis import Explorer

explorer = Explorer([path.strip() for path in runs.split(",") if path.strip()])
explorer
