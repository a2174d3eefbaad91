"""Endpoint records and agent streams for the record's tests, built in a line each."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from coder_eval.pricing import cost_usd
from coder_eval.trajectory import Message, ModelCall, PhaseEvent, ToolCall, ToolResult, ToolReturn, Usage

WORKDIR = "/tmp/coder_eval-x/work"


def answer(
    seq: int,
    *blocks: dict[str, Any],
    results: tuple[ToolReturn, ...] = (),
    position: int | None = None,
    status: int | None = 200,
    kind: str = "main",
    usage: Usage | None = None,
) -> ModelCall:
    """One request at the endpoint, answered with ``blocks`` (``status`` 200 by default), its usage
    priced as served."""
    served = usage or (Usage(input_tokens=100, output_tokens=10) if status == 200 else None)
    return ModelCall(
        seq=seq,
        source="scripted",
        kind=kind,
        position=seq if position is None else position,
        status=status,
        model="claude-sonnet-4-5",
        content=list(blocks) if status == 200 else [],
        tool_results=list(results),
        usage=served,
        cost_usd=cost_usd("claude-sonnet-4-5", served) if served is not None else None,
    )


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(ident: str | None, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": tool_input}


def shown(
    ident: str | None, output: str, is_error: bool | None = False, name: str | None = None
) -> ToolReturn:
    return ToolReturn(id=ident, name=name, output=output, output_chars=len(output), is_error=is_error)


def said(*blocks: dict[str, Any]) -> Message:
    """An assistant message of the agent's stream."""
    return Message(role="assistant", content=list(blocks), model="claude-sonnet-4-5")


def called(ident: str, name: str, **tool_input: Any) -> ToolCall:
    return ToolCall(id=ident, name=name, input=tool_input)


def returned(ident: str, output: str, is_error: bool = False, exit_code: int | None = None) -> ToolResult:
    return ToolResult(
        id=ident, output=output, output_chars=len(output), is_error=is_error, exit_code=exit_code
    )


def agent_phase() -> PhaseEvent:
    return PhaseEvent(name="agent", details={"driver": "bwrap", "workdir": WORKDIR, "home": "/tmp/h"})


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by ``openssl`` (the test is skipped without it)."""
    import shutil
    import subprocess

    import pytest

    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server context for the scripted server playing a provider's HTTPS API."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context
