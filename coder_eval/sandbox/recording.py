"""Recorded CLIs: every call the agent makes to a recorded command is made, and recorded, by the harness.

Example (task file)::

    sandbox:
      shims: [{name: gh, target: mock_bin/gh}]          # the call runs mock_bin/gh in the sandbox
      record_cli: [{tool: kubectl, exit_code: 0, stdout: "deployed"}]   # a canned answer
      # or one per call: [{tool: kubectl, responses: [{when: {verb: get pods}, stdout: "web-1"}]}]

The command on the agent's PATH is a thin client: it sends its argv, cwd, environment and stdin over
a Unix socket to the :class:`RecordingHost` in the harness, which runs the target inside the sandbox
(or takes the canned answer), records the call, and sends back stdout, stderr and the exit code. The
record is therefore made by the harness, not by anything the agent can write: connecting to the socket
by hand only asks the harness to make a real call. A copy of each record is also appended to the
recorder's ``log`` in the workspace (``cli_mocks/calls.jsonl`` for ``record_cli``), for tasks that read
it; graders never trust that copy.

Records (:class:`ShimCall`) reach the trajectory as ``cli_call`` events as they happen, twice per
call: once before the target runs (``exit_code`` null), once when it has returned, under the same
``call_id``. A call whose first record cannot be written is refused and never runs, so no call
happens that graders cannot see. Arguments, working directories and stdin that are not UTF-8 are
kept byte for byte (``coder_eval/untrusted_json.py``). The socket is bounded: at most
:data:`MAX_CONNECTIONS` open, :data:`MAX_CALLS` read and answered at once (the others wait, unread),
a request of at most :data:`REQUEST_CAP_BYTES` sent within :data:`REQUEST_DEADLINE_S`. What is
recorded is bounded too, and a call past a bound is refused rather than recorded in part: its
arguments and folder at most :data:`MAX_ARGV_BYTES`, all of an episode's records at most
:data:`RECORD_BUDGET_BYTES`; the workspace copy of a log stops at :data:`LOG_COPY_BYTES`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coder_eval.errors import CoderEvalError
from coder_eval.sandbox.sockets import Slots, serve_unix
from coder_eval.sandbox.spec import CliRecorder
from coder_eval.untrusted_json import dumps

if TYPE_CHECKING:
    from coder_eval.sandbox.base import Sandbox

STDOUT_CAP_BYTES = 10_000
"""How much of each call's stdout the record keeps (all of it is still passed back to the caller)."""
REQUEST_CAP_BYTES = 4 * 1024 * 1024
"""A request larger than this (argv, environment and stdin together) is refused."""
REQUEST_DEADLINE_S = 10.0
"""A client that has not sent its whole request this long after its turn came is cut off."""
MAX_CALLS = 4
"""Calls read and answered at once; a further one waits its turn without being read."""
MAX_CONNECTIONS = 64
"""Connections open at once; a further one is closed unanswered (the client exits 127)."""
MAX_ARGV_BYTES = 128 * 1024
"""A call whose arguments and working directory are longer is refused: a record cut short could
hide what a grader looks for."""
RECORD_BUDGET_BYTES = 64 * 1024 * 1024
"""All the records of one recorder host (the trajectory's ``cli_call`` events); past it, calls are refused."""
LOG_COPY_BYTES = 1024 * 1024
"""The workspace copy of a log holds the records up to this size (the trajectory holds them all)."""
SOCKET_VARIABLE = "CODER_EVAL_RECORDER"
"""Environment variable that tells the client where the socket is (inside the sandbox)."""
HARNESS_VARIABLES = (SOCKET_VARIABLE, "CODER_EVAL_SANDBOX")
"""Variables the client's environment carries that are not passed on to the target."""


@dataclass(frozen=True)
class ShimCall:
    """One recorded call. ``cwd`` is relative to the workspace when inside it, else absolute;
    ``exit_code`` is None in the record written before the target runs."""

    name: str
    argv: tuple[str, ...]
    cwd: str
    exit_code: int | None
    ts: str
    duration_s: float
    call_id: str = ""
    stdout: str = ""
    stdout_truncated: bool = False
    stderr: str = ""

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments without the command name: ``("pr", "create")`` for ``gh pr create``."""
        return self.argv[1:]

    def record(self) -> dict[str, Any]:
        """The JSON form (the workspace log line and the trajectory's ``cli_call`` event)."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "exit_code": self.exit_code,
            "ts": self.ts,
            "duration_s": self.duration_s,
            "stdout": self.stdout,
            "stdout_truncated": self.stdout_truncated,
            "stderr": self.stderr[:STDOUT_CAP_BYTES],
        }


CLIENT = r"""
import base64, json, os, select, socket, sys


def main(name):
    data = b""
    try:
        if not os.isatty(0) and select.select([0], [], [], 0.05)[0]:
            chunks = []
            while chunk := os.read(0, 65536):
                chunks.append(chunk)
            data = b"".join(chunks)
    except OSError:
        data = b""
    request = {"name": name, "args": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ),
               "stdin": base64.b64encode(data).decode()}
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(os.environ.get("CODER_EVAL_RECORDER", SOCKET))
        conn.sendall(json.dumps(request).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
        answer = json.loads(reply)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"{name}: the coder_eval recorder is unavailable ({exc})\n")
        return 127
    sys.stdout.buffer.write(base64.b64decode(answer["stdout"]))
    sys.stderr.buffer.write(base64.b64decode(answer["stderr"]))
    return int(answer["exit_code"])


raise SystemExit(main(NAME))
"""


def client_script(python: str, name: str, socket_inside: str) -> str:
    """The executable placed on the agent's PATH as ``name``: stdlib only, so it runs isolated and
    without ``site`` (``-IS``, one argument as a ``#!`` line allows), in a third of the start-up time."""
    header = f"#!{python} -IS\nNAME = {name!r}\nSOCKET = {socket_inside!r}\n"
    return header + CLIENT


class RecordingHost:
    """The harness side: answers each call, records it, and appends it to the workspace log.

    Example::

        host = RecordingHost(sandbox, recorders, on_call=lambda call: sink.write(CliCall(...)))
        await host.start(socket_path)          # host path of the socket the clients connect to
        ...
        host.calls                             # [ShimCall, ...], in the order calls finished
        await host.stop()
    """

    def __init__(
        self,
        sandbox: Sandbox,
        recorders: Sequence[CliRecorder],
        on_call: Callable[[ShimCall], None] | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.recorders = {r.name: r for r in recorders}
        self.on_call = on_call
        self.calls: list[ShimCall] = []
        self._logs: dict[str, list[str]] = {}
        self._server: asyncio.base_events.Server | None = None
        self._lock = asyncio.Lock()
        self._slots = Slots(MAX_CALLS)
        self._recorded = 0
        self._stopped = False

    async def start(self, socket_path: Path) -> None:
        self._server = await serve_unix(
            self._serve, socket_path, max_connections=MAX_CONNECTIONS, limit=REQUEST_CAP_BYTES
        )

    async def stop(self) -> None:
        """Stop answering: a call still in flight keeps only the record made before it ran (its
        trajectory may be closing), and a new one is refused."""
        self._stopped = True
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    def by_log(self, log: str) -> list[ShimCall]:
        """The calls of every recorder whose workspace log is ``log``."""
        names = {name for name, r in self.recorders.items() if r.log == log}
        return [call for call in self.calls if call.name in names]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with self._slots.held(writer):
            try:
                line = await asyncio.wait_for(reader.readline(), REQUEST_DEADLINE_S)
                reply = await self._answer(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError, TimeoutError) as exc:
                reply = _reply(2, b"", f"coder_eval recorder: bad request ({type(exc).__name__})\n".encode())
            with contextlib.suppress(OSError):
                writer.write(json.dumps(reply).encode())
                await writer.drain()

    async def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        recorder = self.recorders.get(str(request["name"]))
        if recorder is None:
            return _reply(127, b"", f"{request['name']}: not a recorded command\n".encode())
        args = [str(a) for a in request["args"]]
        cwd = str(request["cwd"])
        clock = time.monotonic()
        call = ShimCall(
            name=recorder.name,
            argv=(recorder.name, *args),
            cwd=self._relative(cwd),
            exit_code=None,
            ts=datetime.now(UTC).isoformat(),
            duration_s=0.0,
            call_id=uuid.uuid4().hex[:16],
        )
        try:
            self._record(call)
        except Exception as exc:  # whatever stops the record stops the call
            why = f"{recorder.name}: coder_eval could not record this call, so it did not run ({exc})\n"
            return _reply(126, b"", why.encode("utf-8", errors="backslashreplace"))
        if recorder.target is None:
            code, stdout, stderr = recorder.answer(args)
            out, err = stdout.encode(), stderr.encode()
        else:
            try:
                code, out, err = await self._run_target(recorder, args, cwd, request)
            except (CoderEvalError, UnicodeError) as exc:  # a cwd that is gone, an argument no OS takes
                code, out, err = 126, b"", f"{recorder.name}: {exc}\n".encode("utf-8", "backslashreplace")
        done = dataclasses.replace(
            call,
            exit_code=code,
            duration_s=round(time.monotonic() - clock, 6),
            stdout=out[:STDOUT_CAP_BYTES].decode("utf-8", errors="surrogateescape"),
            stdout_truncated=len(out) > STDOUT_CAP_BYTES,
            stderr=err[:STDOUT_CAP_BYTES].decode("utf-8", errors="surrogateescape"),
        )
        await self._keep(recorder, done)
        return _reply(code, out, err)

    async def _run_target(
        self, recorder: CliRecorder, args: list[str], cwd: str, request: dict[str, Any]
    ) -> tuple[int, bytes, bytes]:
        env = {k: str(v) for k, v in dict(request.get("env") or {}).items() if k not in HARNESS_VARIABLES}
        stdin = base64.b64decode(str(request.get("stdin") or "")).decode("utf-8", errors="surrogateescape")
        target = f"{self.sandbox.workdir.rstrip('/')}/{recorder.target}"
        result = await self.sandbox.exec([target, *args], cwd=cwd, env=env, stdin=stdin or None)
        return result.exit_code, _bytes(result.stdout), _bytes(result.stderr)

    def _relative(self, cwd: str) -> str:
        root = self.sandbox.workdir.rstrip("/")
        if cwd == root:
            return "."
        return cwd[len(root) + 1 :] if cwd.startswith(root + "/") else cwd

    def _record(self, call: ShimCall) -> None:
        """The trajectory's record of a call (raises when it cannot be written, or is past a bound)."""
        if self._stopped:
            raise ValueError("the episode's recording has ended")
        if call.exit_code is None:
            length = len(call.cwd) + sum(len(arg) for arg in call.argv)
            if length > MAX_ARGV_BYTES:
                raise ValueError(f"its arguments hold {length} characters, past {MAX_ARGV_BYTES}")
            if self._recorded > RECORD_BUDGET_BYTES:
                raise ValueError(f"this episode's recorded calls passed {RECORD_BUDGET_BYTES // 2**20} MiB")
        self._recorded += len(call.cwd) + sum(map(len, (*call.argv, call.stdout, call.stderr)))
        if self.on_call is not None:
            self.on_call(call)

    async def _keep(self, recorder: CliRecorder, call: ShimCall) -> None:
        async with self._lock:
            self.calls.append(call)
            with contextlib.suppress(Exception):  # the first record stands; the call has run
                self._record(call)
            if recorder.log is None:
                return
            lines = self._logs.setdefault(recorder.log, [])
            line = dumps(call.record(), separators=(", ", ": "))
            if sum(map(len, lines)) + len(line) > LOG_COPY_BYTES:
                return  # the copy is full; the trajectory has every record
            lines.append(line)
            with contextlib.suppress(Exception):  # the workspace copy is a courtesy, never the record
                await self.sandbox.write_file(recorder.log, "\n".join(lines) + "\n")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _reply(code: int, stdout: bytes, stderr: bytes) -> dict[str, Any]:
    return {
        "exit_code": code,
        "stdout": base64.b64encode(stdout).decode(),
        "stderr": base64.b64encode(stderr).decode(),
    }
