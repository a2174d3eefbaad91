"""The run's answer: the one comparison a run declares (``engine``), computed once from the
statistics and read by every surface; which tasks a headline covers, a run against its baseline
run, the wording of a verdict, and a run that stopped at its answer.
"""
