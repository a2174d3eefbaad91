"""Bundles onto a dask cluster: each task folder packed once per run and left with the scheduler under
its content address, fetched once per worker; a bundle whose bytes were changed on the way is refused
by the worker (the episode is ``invalid``, the harness's), never run."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from coder_eval.episode.plan import plan_episodes
from coder_eval.executors.dask import bundle_sender
from coder_eval.executors.dask.bundle_sender import METADATA
from coder_eval.executors.dask.bundles import Bundle, pack
from coder_eval.executors.dask.executor import open_dask
from coder_eval.task import load_tasks
from coder_eval.trajectory import read_trajectory
from tests.helpers import minimal_task

QUICK = "sandbox: {driver: tempdir}\nagent: {kind: command, command: 'echo ok > ok.txt'}\n"


def test_a_folder_is_packed_once_and_each_worker_fetches_it_once(tmp_path: Path) -> None:
    minimal_task(tmp_path / "tasks", "a", QUICK)
    minimal_task(tmp_path / "tasks", "b", QUICK)
    plans = plan_episodes(load_tasks([tmp_path / "tasks"]), repeats=2)
    loose = replace(plans[0], task=plans[0].task.model_copy(update={"source_path": None}))

    async def send() -> tuple[list[str | None], dict[str, int], object, bytes, int]:
        async with open_dask(slots=1) as executor:
            sent = [(await executor.bundles.send(plan)).bundle for plan in plans]
            alone = await executor.bundles.send(loose)
            for number, plan in enumerate(plans):
                await executor.run(plan, "r", tmp_path / f"{number}.jsonl")
            stored = await executor.client.scheduler.get_metadata(keys=[METADATA, sent[0]])
            await asyncio.sleep(0.5)  # the workers' fetch events reach this process
            return sent, executor.bundles.sizes(), alone, stored, executor.bundles.fetched_bytes

    sent, sizes, alone, stored, fetched = asyncio.run(send())
    expected = pack(tmp_path / "tasks")
    assert sent == [expected.sha256] * 4  # one folder, one bundle
    assert sizes == {expected.sha256: len(expected.data)} and stored == expected.data
    assert fetched == len(expected.data)  # four episodes on one worker: fetched once
    assert alone is loose  # no task file: no folder to send, the plan travels whole


def test_a_bundle_changed_on_the_way_is_refused_and_its_episode_is_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minimal_task(tmp_path / "tasks", "a", QUICK)
    (plan,) = plan_episodes(load_tasks([tmp_path / "tasks"]))

    def tampered(folder: Path) -> Bundle:
        honest = pack(folder)
        return Bundle(honest.sha256, honest.data[:-4] + b"\0\0\0\0")

    monkeypatch.setattr(bundle_sender, "pack", tampered)

    async def run() -> None:
        async with open_dask(slots=1) as executor:
            await executor.run(plan, "r", tmp_path / "episode.jsonl")

    asyncio.run(run())
    trajectory = read_trajectory(tmp_path / "episode.jsonl")
    end = trajectory.end
    assert end is not None and (end.outcome, end.status, end.invalid_cause) == (
        "invalid",
        "infra_error",
        "harness",
    )
    assert end.error is not None and "BundleError" in end.error and "refused, its bytes hash to" in end.error
    assert [e.type for e in trajectory.events] == ["episode_start", "episode_end"]  # nothing ran
