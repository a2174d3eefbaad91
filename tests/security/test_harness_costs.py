"""The agent cannot make the harness pay: what it leaves, prints or sends is bounded in the harness.

Each attack runs as the agent of a task without limits (the defaults hold), on every driver; the
harness process is watched while it runs: the largest file it holds open, and how far its resident
memory grows. The figures of the full-size attacks are in ``benchmarks/harness_costs.py``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from coder_eval.sandbox.recording import REQUEST_CAP_BYTES
from coder_eval.scripted.handler import MAX_BODY_BYTES

from .conftest import EVERY, Attack

pytestmark = pytest.mark.parametrize("driver", EVERY)

MB = 1024 * 1024


@dataclass
class Watch:
    """The harness process's peaks while an attack ran."""

    largest_open_file: int = 0
    rss_growth: int = 0


@contextmanager
def watched() -> Iterator[Watch]:
    """Sample this process every 10 ms: the sizes of the regular files it holds open, its RSS."""
    watch, done = Watch(), threading.Event()
    page = os.sysconf("SC_PAGE_SIZE")

    def rss() -> int:
        return int(Path("/proc/self/statm").read_text().split()[1]) * page

    baseline = rss()

    def sample() -> None:
        while not done.wait(0.01):
            watch.rss_growth = max(watch.rss_growth, rss() - baseline)
            for fd in Path("/proc/self/fd").iterdir():
                try:
                    info = fd.stat()
                except OSError:
                    continue
                if info.st_mode & 0o170000 == 0o100000:  # a regular file
                    watch.largest_open_file = max(watch.largest_open_file, info.st_size)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield watch
    finally:
        done.set()
        sampler.join()


def test_sparse_files_are_refused_by_apparent_size(attack: Attack, driver: str) -> None:
    script = """
    truncate -s 2G one-big 2> big.txt || echo "refused: $(cat big.txt)"
    for i in 1 2 3; do truncate -s 900M sparse-$i; done
    """
    with watched() as watch:
        outcome = attack(script, driver)

    assert (outcome.end.outcome, outcome.end.status) == ("fail", "resource_limit")
    assert "max_workspace_mb" in (outcome.end.error or "") and outcome.verdicts == {}
    assert watch.largest_open_file < 64 * MB  # nothing spooled: the workspace was measured first


def test_an_inode_flood_is_cut_off(attack: Attack, driver: str) -> None:
    """A small probe (the task sets the bound low); the 100,000-file flood against the default is
    measured by ``benchmarks/harness_costs.py``."""
    script = "mkdir flood && cd flood && seq 3000 | xargs touch"
    outcome = attack(script, driver, overrides={"sandbox": {"limits": {"max_workspace_files": 2000}}})

    assert (outcome.end.outcome, outcome.end.status) == ("fail", "resource_limit")
    assert "max_workspace_files" in (outcome.end.error or "") and outcome.verdicts == {}


def test_an_output_flood_is_capped_where_it_is_read(attack: Attack, driver: str) -> None:
    with watched() as watch:
        outcome = attack("head -c 100000000 /dev/zero | tr '\\0' x; head -c 100000000 /dev/zero >&2", driver)

    assert outcome.held() and outcome.end.status == "completed"
    assert watch.largest_open_file < 64 * MB  # not spooled whole to be cut afterwards


FLOOD = """
import json, os, socket, sys, threading

target, connections, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
answered, refused = [], []

def send(body):
    try:
        if target == "recorder":
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(os.environ["CODER_EVAL_RECORDER"])
            conn.sendall(body + b"\\n")
            conn.shutdown(socket.SHUT_WR)
        else:
            conn = model()
            head = "POST /v1/messages HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n"
            conn.sendall(head.encode() + b"Content-Length: %d\\r\\n\\r\\n" % len(body))
            conn.sendall(body)
        (answered if conn.recv(100) else refused).append(1)
    except (BrokenPipeError, ConnectionResetError):  # refused while it was still sending
        refused.append(1)

def model():
    host, port = os.environ["ANTHROPIC_BASE_URL"].removeprefix("http://").split(":")
    try:
        return socket.create_connection((host, int(port)), timeout=60)
    except OSError:  # docker: no forwarder for commands, but the proxy's socket is there
        conn = socket.socket(socket.AF_UNIX)
        conn.connect("/coder_eval/run/model.sock")
        return conn

if target == "recorder":
    body = json.dumps({"name": "deployctl", "args": [], "cwd": "/", "env": {}, "stdin": "A" * size})
else:
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 1,
                       "messages": [{"role": "user", "content": "x" * size}]})
threads = [threading.Thread(target=send, args=(body.encode(),)) for _ in range(connections)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(f"answered {len(answered)} refused {len(refused)}")
"""
SOCKETS = """
task_id: flood
initial_prompt: Deploy nothing.
scripted: {{turns: [{{blocks: [{{text: done}}]}}]}}
sandbox:
  driver: {driver}
  record_cli: [{{tool: deployctl, exit_code: 0, stdout: ok}}]
success_criteria:
  - {{id: hidden, type: recorded_calls, shim: deployctl, min_calls: 1}}
"""


@pytest.mark.parametrize(
    ("target", "connections", "cap"), [("recorder", 40, REQUEST_CAP_BYTES), ("model", 20, MAX_BODY_BYTES)]
)
def test_a_connection_flood_leaves_the_harness_small(
    attack: Attack, driver: str, target: str, connections: int, cap: int
) -> None:
    """40 connections of 15 MiB to the CLI recorder; 20 requests to the model endpoint, each as large
    as the server still reads (just under 8 MiB)."""
    size = 15 * MB if target == "recorder" else cap - 64 * 1024  # the recorder refuses past 4 MiB
    script = f"cat > $TMPDIR/flood.py <<'EOF'\n{FLOOD}EOF\npython3 $TMPDIR/flood.py {target} {connections} {size}\ntrue\n"
    agent = {"kind": "command", "model": "scripted", "command": script}
    with watched() as watch:
        outcome = attack("", driver, task=SOCKETS, overrides={"agent": agent})

    assert outcome.end.outcome != "invalid" and outcome.end.status == "completed"
    expected = (
        f"answered 0 refused {connections}" if target == "recorder" else f"answered {connections} refused 0"
    )
    assert expected in (outcome.end.final_message or "")  # each reached the harness, and was dealt with
    assert watch.rss_growth < 200 * MB, f"the harness grew by {watch.rss_growth / MB:.0f} MB"
