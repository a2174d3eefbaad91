"""Other tools' logs read as episodes: Inspect AI eval logs (``inspect_files``, ``inspect_logs``,
``inspect_scores``)."""
