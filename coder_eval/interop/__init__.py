"""coder_eval and other evaluation tools: importers and exporters.

- ``inspect_files``: which files are Inspect AI eval logs (cheap to import).
- ``inspect_logs``: Inspect AI eval logs (``.eval``, ``.json``) read into the analysis frames, so
  ``load_runs`` and every statistic and report work on them (``pip install 'coder_eval[inspect]'``).
- ``atif``: the Agent Trajectory Interchange Format document, as pydantic models.
- ``atif_export``: coder_eval trajectories written as ATIF documents (``coder-eval export``).

Nothing is imported here, so importing one importer never pulls in another's dependencies.

Example::

    from coder_eval.interop.atif_export import export_atif
    export_atif([Path("runs/latest")], Path("atif/"))
"""
