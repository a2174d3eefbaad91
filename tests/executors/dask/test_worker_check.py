"""Before a run starts on a dask cluster, every worker is asked whether it can run it: a mismatch is one
error naming the worker and what to do (exit 2), and no episode runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from coder_eval.episode.plan import plan_episodes
from coder_eval.executors.dask.worker_check import Needs, mismatches, worker_facts
from coder_eval.task import load_tasks
from tests.executors.builders import running_cluster
from tests.helpers import EXAMPLES, coder_eval, minimal_task


def example_needs() -> Needs:
    return asyncio.run(Needs.of(plan_episodes(load_tasks([EXAMPLES]))))


def test_a_run_names_its_versions_drivers_and_agents() -> None:
    needs = example_needs()
    assert needs.agents == ("claude-code",) and set(needs.drivers) >= {"auto"}
    assert needs.python.count(".") == 1


def test_the_images_a_tasks_dockerfile_starts_from_are_needed_but_the_default_one(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "Dockerfile").write_text("FROM coder-eval/base AS tools\nFROM local/tb:1\n")
    sandbox = "sandbox: {driver: docker, docker: {dockerfile_path: env/Dockerfile}}\n"
    minimal_task(tmp_path / "tasks", "built", sandbox.replace("env/", "../env/"))

    needs = asyncio.run(Needs.of(plan_episodes(load_tasks([tmp_path / "tasks"]))))

    assert needs.images == ("local/tb:1",)


def test_a_worker_like_this_process_lacks_nothing() -> None:
    needs = example_needs()
    assert mismatches(needs, asyncio.run(worker_facts(asdict(needs)))) == []


def test_each_thing_a_worker_lacks_is_named_with_what_to_do() -> None:
    needs = example_needs()
    facts = asyncio.run(worker_facts(asdict(needs)))
    other = {
        **facts,
        "coder_eval": "0.0.1",
        "python": "3.99",
        "drivers": dict.fromkeys(needs.drivers, "tempdir"),
        "missing_images": ["local/app:1"],
        "missing_agents": ["claude-code"],
    }
    found = mismatches(needs, other)
    assert any(m.startswith("coder_eval 0.0.1 (this process: ") for m in found)
    assert any(m.startswith("python 3.99") for m in found)
    if needs.drivers["auto"] == "bwrap":
        assert "sandbox driver 'auto' is 'tempdir' there, 'bwrap' here: install bubblewrap" in found
    assert "docker image 'local/app:1' is missing: build or load it there" in found
    assert "the claude-code agent's CLI is missing: install it there" in found


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    with running_cluster(tmp_path / "cluster") as started:
        yield started.address


def test_a_worker_without_the_tasks_image_refuses_the_run_before_any_episode(
    tmp_path: Path, cluster: str
) -> None:
    image = "local/coder-eval-absent:1"
    minimal_task(tmp_path / "tasks", "boxed", f"sandbox: {{driver: docker, docker: {{image: {image}}}}}\n")
    result = coder_eval(
        "run",
        "tasks",
        "--executor",
        "dask",
        "--scheduler",
        cluster,
        "--no-report",
        "--run-dir",
        "runs/r",
        cwd=tmp_path,
    )

    assert result.returncode == 2, result.stderr
    assert f"the dask cluster at {cluster} cannot run this run's episodes" in result.stderr
    assert f"docker image {image!r} is missing: build or load it there" in result.stderr or (
        "sandbox driver 'docker'" in result.stderr  # no engine answers at all
    )
    assert not list((tmp_path / "runs" / "r" / "episodes").glob("*.jsonl"))
