"""An agent that runs into a limit of its sandbox has failed: status ``resource_limit``, outcome
``fail``, never ``invalid`` (which would leave the episode out of pass rates). Here the agent forks
past ``max_pids`` and crashes on the refused fork."""

from __future__ import annotations

import pytest

from .conftest import EVERY, Attack

pytestmark = pytest.mark.parametrize("driver", EVERY)

LIMITED = """
task_id: limited
initial_prompt: Write done.txt.
sandbox: {{driver: {driver}, limits: {{max_pids: 24}}}}
success_criteria: [{{id: done, type: file_exists, path: done.txt}}]
"""

FORK_FLOOD = """python3 -c '
import os, time
for _ in range(200):
    if os.fork() == 0:
        time.sleep(5)
        os._exit(0)
'"""


def test_an_agent_that_forks_past_the_process_limit_fails(attack: Attack, driver: str) -> None:
    overrides = {"agent": {"kind": "command", "command": FORK_FLOOD}}
    outcome = attack("", driver, LIMITED, overrides)

    assert (outcome.end.outcome, outcome.end.status) == ("fail", "resource_limit"), outcome.summary()
    assert "process limit (24)" in (outcome.end.error or "")
