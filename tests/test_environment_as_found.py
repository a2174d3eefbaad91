"""Each test finds this process's environment as the test before it found it (``environment_as_found``
in tests/conftest.py): what a library sets there for its own processes stays in the test that made it.
The two tests run in this order, in one process (``--dist loadfile``)."""

from __future__ import annotations

import os

LEFT = "CODER_EVAL_TEST_LEFT_BY_A_LIBRARY"
found: dict[str, str | None] = {}


def test_a_library_sets_variables_for_its_own_processes() -> None:
    found.update({"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED"), LEFT: os.environ.get(LEFT)})
    os.environ["PYTHONHASHSEED"] = "6640"  # as dask's LocalCluster does in the process that starts it
    os.environ[LEFT] = "1"
    assert os.environ[LEFT] == "1"


def test_the_next_test_finds_the_environment_as_it_was() -> None:
    assert found, "runs after the test above, in the same process"
    assert {name: os.environ.get(name) for name in found} == found
