"""A Dockerfile read before it is built: the images it starts from and its final working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_eval.errors import SandboxError
from coder_eval.sandbox.docker.dockerfile import DockerfileFacts, read_dockerfile


def facts(tmp_path: Path, text: str, args: dict[str, str] | None = None) -> DockerfileFacts:
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    return read_dockerfile(path, args)


def test_a_plain_dockerfile(tmp_path: Path) -> None:
    base = "ghcr.io/laude-institute/t-bench/python-3-13:20250620"
    text = f"# comment\nFROM {base}\n\nWORKDIR /app\nRUN x\n"
    assert facts(tmp_path, text) == DockerfileFacts((base,), "/app")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # stages: an earlier stage is no base, and the working directory is the final stage's
            "FROM --platform=linux/amd64 python:3.12 AS build\nWORKDIR /src\n"
            "FROM build AS test\nFROM debian:12\nCOPY --from=build /src /opt\n",
            DockerfileFacts(("python:3.12", "debian:12"), None),
        ),
        (  # relative WORKDIRs build on the one before; continuations and quotes
            'FROM scratch\nWORKDIR "/srv"\nWORKDIR \\\n  app\n',
            DockerfileFacts((), "/srv/app"),
        ),
        (  # ARG defaults before FROM fill it in
            "ARG BASE=coder-eval/base\nARG TAG\nFROM ${BASE}:latest\nfrom $BASE\n",
            DockerfileFacts(("coder-eval/base:latest", "coder-eval/base"), None),
        ),
    ],
)
def test_stages_workdirs_and_arguments(tmp_path: Path, text: str, expected: DockerfileFacts) -> None:
    assert facts(tmp_path, text) == expected


def test_build_arguments_win_over_defaults(tmp_path: Path) -> None:
    found = facts(tmp_path, "ARG BASE=a\nFROM ${BASE}\n", {"BASE": "b"})
    assert found.bases == ("b",)


def test_an_unreadable_dockerfile_is_a_sandbox_error(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="cannot read the Dockerfile"):
        read_dockerfile(tmp_path / "missing")
