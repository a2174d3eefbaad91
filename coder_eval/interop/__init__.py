"""coder_eval and other evaluation tools, by direction.

- ``task_readers``: other tools' tasks as coder_eval tasks (Harbor task directories, Terminal-Bench
  task folders).
- ``log_readers``: other tools' logs as episodes: Inspect AI eval logs (``.eval``, ``.json``) read into
  the analysis frames, so ``load_runs`` and every statistic and report work on them
  (``pip install 'coder-eval-toolkit[inspect]'``); ``inspect_files`` says which files are such logs, cheaply.
- ``exporters``: coder_eval trajectories written for other tools: ATIF documents (``coder-eval export``).

Nothing is imported here, so importing one reader never pulls in another's dependencies.

Example::

    from coder_eval.interop.exporters.atif_export import export_atif
    export_atif([Path("runs/latest")], Path("atif/"))
"""
