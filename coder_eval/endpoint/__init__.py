"""The model endpoint as the harness sees it: every request an agent's CLI makes crosses a point the
harness owns (the scripted server, or the API proxy in front of a real model), which records what
the model asked for, what the CLI sent back, and the usage served (``exchange.py``, ``proxy.py``);
the agent CLI's own account is checked against that record (``check.py``); and a recorded episode
can be replayed offline as a script (``replay.py``).
"""
