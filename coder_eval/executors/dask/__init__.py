"""The ``dask`` executor: episodes on a dask.distributed cluster, the task bundles that travel to its
workers, the worker's side, and the watch on the cluster (the ``dask`` extra).

``executor`` is the submitting side (``open_dask``), ``worker`` what runs on a worker, ``bundles``
and ``bundle_sender`` the content-addressed task folders, ``live_lines`` and ``episode_files`` how an
episode's files come back, ``worker_check`` and ``cluster_watch`` what is checked before and during.
"""
