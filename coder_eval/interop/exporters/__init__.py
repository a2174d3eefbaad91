"""coder_eval trajectories written for other tools: ATIF documents (``atif``, ``atif_steps``,
``atif_export``)."""
