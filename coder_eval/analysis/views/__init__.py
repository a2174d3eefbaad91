"""The views: what the report notebooks and the explorer call (``notebook``), Markdown for pull
requests, plots that take an ``ax``, and the widgets. They show the run's answer; they compute none.
"""
