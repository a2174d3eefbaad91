"""The report templates (jupytext py:percent notebooks), shipped as ``coder_eval.notebooks``.

Read them as files through ``importlib.resources``; importing one would run it.
"""
