"""Which rows of a dataset task run: ``split``, then one sampler, with the original format's seeds.

Example (``--split train --sample-per-stratum 2``, or the same in the task's ``dataset`` block)::

    rows = select_rows(dataset, rows, where="tasks/triggers.yaml:7")

1. ``split`` keeps the rows whose ``split_field`` equals it (none left is an error naming the splits).
2. ``sample`` (``--sample N``): N rows drawn uniformly from what is left, with ``random.Random(0)``
   over the rows in file order, the original's fixed seed whatever ``sample_seed`` says, so the same
   N draws the same rows on every machine and every run. It replaces the per-stratum sample.
3. otherwise ``sample_per_stratum`` (``--sample-per-stratum N``, which wins over the task's): up to N
   rows per stratum, the stratum being ``str(row.get(stratify_field, ""))`` (a missing field is the
   ``""`` stratum, a null one ``"None"``). One ``random.Random(sample_seed)`` draws, stratum after
   stratum in the order they first appear, and only from strata with more than N rows, exactly as
   the original coder_eval draws, so a seed picks the same rows there and here. The original draws
   anew each run when ``sample_seed`` is unset; here it defaults to 0, so ``--resume`` and every
   variant see the same rows; set another ``sample_seed`` (``-D dataset.sample_seed=7``) for others.

Rows keep their file order whichever sampler picked them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

from coder_eval.errors import TaskError, did_you_mean

SMOKE_SEED = 0
"""The seed of ``--sample``: the original format's fixed seed for its uniform row sample."""


class RowRules(Protocol):
    """The dataset fields that select rows (``coder_eval.task.dataset.DatasetSpec``)."""

    @property
    def split(self) -> str | None: ...
    @property
    def split_field(self) -> str: ...
    @property
    def sample(self) -> int | None: ...
    @property
    def sample_per_stratum(self) -> int | None: ...
    @property
    def stratify_field(self) -> str: ...
    @property
    def sample_seed(self) -> int: ...


def select_rows(rules: RowRules, rows: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """The rows ``rules`` keep, in file order (each row carries its id as ``__id__``)."""
    if rules.split is not None:
        rows = split_rows(rows, rules.split, rules.split_field, where)
    if rules.sample is not None:
        keep = uniform_sample([r["__id__"] for r in rows], rules.sample)
    elif rules.sample_per_stratum is not None:
        strata = [stratum(r, rules.stratify_field) for r in rows]
        keep = stratified_sample(
            [r["__id__"] for r in rows], strata, rules.sample_per_stratum, rules.sample_seed
        )
    else:
        return rows
    return [r for r in rows if r["__id__"] in keep]


def split_rows(rows: list[dict[str, Any]], split: str, field: str, where: str) -> list[dict[str, Any]]:
    """The rows of ``split``; ``TaskError`` naming the splits present when there is none."""
    kept = [r for r in rows if str(r.get(field)) == split]
    if not kept:
        splits = sorted({str(r[field]) for r in rows if field in r})
        raise TaskError(
            f"{where}: dataset.split: no row has {field}={split!r}{did_you_mean(split, splits)}; "
            f"splits present: {', '.join(splits) or 'none'}"
        )
    return kept


def stratum(row: dict[str, Any], field: str) -> str:
    """The stratum of ``row``: ``str(row.get(field, ""))`` (missing: ``""``; null: ``"None"``)."""
    return str(row.get(field, ""))


def uniform_sample(ids: Sequence[str], n: int) -> set[str]:
    """``n`` of ``ids`` drawn with ``random.Random(SMOKE_SEED)`` (all of them when there are no more)."""
    if n >= len(ids):
        return set(ids)
    return set(random.Random(SMOKE_SEED).sample(list(ids), n))


def stratified_sample(ids: Sequence[str], strata: Sequence[str], n: int, seed: int) -> set[str]:
    """Up to ``n`` ids per stratum: one ``random.Random(seed)``, strata in first-seen order, drawing
    only where a stratum has more than ``n``."""
    groups: dict[str, list[str]] = {}
    for row_id, name in zip(ids, strata, strict=True):
        groups.setdefault(name, []).append(row_id)
    rng = random.Random(seed)
    keep: set[str] = set()
    for group in groups.values():
        keep.update(group if len(group) <= n else rng.sample(group, n))
    return keep
