"""Fixtures shared across the test packages."""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import coder_eval.scripted
from coder_eval.sandbox.trees import remove_tree
from coder_eval.scripted import ScriptedServer
from tests.docker_engine import _docker_when_marked, docker_engine, stop_started_engine  # noqa: F401
from tests.helpers import REPO

if TYPE_CHECKING:
    from tests.demo_figures import DemoRun


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's end (in the xdist controller, or the only process): stop a daemon the tests started."""
    if not hasattr(session.config, "workerinput"):
        stop_started_engine()


FIRST = (
    "tests/test_docs.py",  # 525 s (on 2 processes, 2026-12-06); the demo run it shares is made first
    "tests/cli/test_history.py",  # 145
    "tests/cli/test_run_adaptive.py",  # 119
    "tests/test_ci.py",  # 99
    "tests/executors/test_host_faults.py",  # 92
    "tests/interop/task_readers/test_harbor.py",  # 91
    "tests/test_one_answer.py",  # 91
    "tests/run/test_report_kernel.py",  # 88
    "tests/sandbox/docker/test_driver.py",  # 80
    "tests/test_packaging.py",  # 71
    "tests/security/test_grader_attacks.py",  # 69
    "tests/security/test_boundary_attacks.py",  # 69
    "tests/executors/dask/test_cluster_watch.py",  # 65
    "tests/run/test_render.py",  # 65
    "tests/test_demo.py",  # 63; late enough that the demo run it shares is made by then
    "tests/cli/test_plan_forecast.py",  # 63
    "tests/run/test_resume.py",  # 63
    "tests/test_report_cases.py",  # 60
    "tests/agents/test_cli_agents.py",  # 59
    "tests/compat/test_team_suite.py",  # 50
    "tests/security/test_record_attacks.py",  # 50
    "tests/sandbox/test_drivers.py",  # 49
    "tests/security/test_bounded_grading.py",  # 46
    "tests/executors/test_dask_lifecycle.py",  # 44
    "tests/security/test_trusted_pytest.py",  # 44
    "tests/run/test_frozen.py",  # 40
)
"""The files whose tests take longest together, run first, longest first (their measured seconds):
with a test file per process (``--dist loadfile``, and ``--no-loadscope-reorder`` so that xdist keeps
this order instead of sorting files by their number of tests), one of them started last would leave
the other process idle at the end. The order only balances the processes; any order passes."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of ``FIRST`` first, in its order; every other test as collected."""
    rank = {name: i for i, name in enumerate(FIRST)}
    where = {id(item): str(Path(str(item.path)).relative_to(REPO)) for item in items}
    items.sort(key=lambda item: rank.get(where[id(item)], len(FIRST)))


def repository_outputs() -> set[str]:
    """What a test could leave in the repository by mistake: its top-level files and folders (caches
    and the virtual environment aside) and what is in ``runs/`` and ``reports/``."""
    found = {p.name for p in REPO.iterdir() if not p.name.startswith(".") and p.name != "__pycache__"}
    found -= {p for p in found if p.endswith(".egg-info")}
    for folder in ("runs", "reports"):
        if (REPO / folder).is_dir():
            found |= {f"{folder}/{p.name}" for p in (REPO / folder).iterdir()}
    return found


@pytest.fixture(autouse=True)
def writes_nothing_into_the_repository() -> Iterator[None]:
    """Every test works in its own folders: one that leaves a run, a report or any other file in the
    repository fails (it would also change what the next test finds there)."""
    before = repository_outputs()
    yield
    left = sorted(repository_outputs() - before)
    assert not left, (
        f"a test wrote into the repository (this one, or one beside it on another worker): {left}"
    )


@pytest.fixture(autouse=True)
def environment_as_found() -> Iterator[None]:
    """Every test leaves this process's environment as it found it. A library may set variables there
    for processes of its own (dask's LocalCluster sets ``PYTHONHASHSEED`` and the BLAS thread counts
    in the process that starts it): they would reach the commands of every later test, and a changed
    start-up variable costs those a fork server of their own (``tests/cli_fork.py``)."""
    before = dict(os.environ)
    yield
    if os.environ != before:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ScriptedServer]]:
    """Every scripted server started during the test (the agent's, a judge's, a simulator's), to read
    the requests each received."""
    made: list[ScriptedServer] = []

    class Recording(ScriptedServer):
        def start(self) -> ScriptedServer:
            made.append(self)
            return super().start()

    monkeypatch.setattr(coder_eval.scripted, "ScriptedServer", Recording)
    yield made


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary folder of the test's own under /tmp, short enough that sandboxes made in it hold
    the harness's Unix sockets (pytest's own folders can be too deep: ``sandbox_root``)."""
    folder = Path(tempfile.mkdtemp(prefix="ce-test-", dir="/tmp"))
    try:
        yield folder
    finally:
        remove_tree(folder)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> DemoRun:
    """The whole demo, run once for the whole test session by ``make run``'s command (see
    tests/demo_figures.py): with xdist, the first worker to ask makes it and the others read it."""
    from tests.demo_figures import DemoRun, run_demo  # pandas and the analysis stack, on demand

    if worker_id == "master":
        return run_demo(tmp_path_factory.mktemp("demo"))
    shared = tmp_path_factory.getbasetemp().parent  # the session's folder, shared by its workers
    with (shared / "demo.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = shared / "demo"
        said = made / "printed.json"
        if said.is_file():
            printed = json.loads(said.read_text(encoding="utf-8"))
            return DemoRun(made, printed["stdout"], printed["exit_code"])
        made.mkdir()
        demo = run_demo(made)
        said.write_text(json.dumps({"stdout": demo.stdout, "exit_code": demo.exit_code}), encoding="utf-8")
        return demo
