"""Datasets: one task fanned out into one task per row, with ``${row.<field>}`` substituted.

Example (in a task file)::

    task_id: triggers
    initial_prompt: "${row.prompt}"
    dataset:
      paths: [prompts.jsonl]          # or `path: prompts.jsonl`, or inline `rows`
      id_field: id                    # task ids become triggers.<id>
      split: test                     # keep rows whose `split` field is "test"
      sample_per_stratum: 5           # then 5 rows per value of stratify_field (default expected_skill)
                                      # (or sample: 20 -- 20 rows drawn uniformly; row_selection.py)
      stratify_field: kind
      sample_seed: 0                  # the default
    success_criteria:
      - {type: skill_triggered, skill: sitectl, expected_skill: "${row.expected_skill}"}

``${row.<field>}`` is substituted in the prompt (also one read from ``initial_prompt_file``), the
description, every string of ``success_criteria`` and the ``reference_solution``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from coder_eval.errors import TaskError
from coder_eval.file_kinds import not_readable
from coder_eval.task.rows import select_rows
from coder_eval.yaml_source import YamlDoc, explain, read_text_file

ROW_REF = re.compile(r"\$\{row\.([A-Za-z0-9_]+)\}")
ROW_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,78}[A-Za-z0-9])?")
"""A row id: it becomes the end of the task id ``<task_id>.<row id>``."""
SAMPLE_SEED = 0
"""Default seed of the samples (``sample_seed``, ``--sample-tasks``): the same N gives the same tasks."""


class DatasetSpec(BaseModel):
    """Rows that fan one task out into many; ``${row.<field>}`` is substituted in prompt and criteria."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rows: list[dict[str, Any]] | None = Field(default=None, description="Inline rows.")
    path: str | None = Field(default=None, description="A JSONL file, relative to the task file.")
    paths: list[str] = Field(default_factory=list, description="JSONL files, relative to the task file.")
    id_field: str = Field(default="id", description="Row field used in the task id.")
    split: str | None = Field(default=None, description="Keep only rows whose split_field equals this.")
    split_field: str = Field(default="split", description="Row field holding the split name.")
    sample: int | None = Field(
        default=None, ge=1, description="Keep this many rows, drawn uniformly with seed 0 (--sample)."
    )
    sample_per_stratum: int | None = Field(
        default=None, ge=1, description="Keep this many rows per value of stratify_field (seed sample_seed)."
    )
    stratify_field: str = Field(
        default="expected_skill", description="Row field whose values are the strata (a missing one is '')."
    )
    sample_seed: int = Field(default=SAMPLE_SEED, description="Seed of the per-stratum sample.")

    @model_validator(mode="after")
    def _one_origin(self) -> DatasetSpec:
        if self.path is not None and self.path in self.paths:
            raise ValueError(f"{self.path!r} is given in both 'path' and 'paths'")
        return self

    @property
    def files(self) -> list[str]:
        """``path`` then ``paths``."""
        return [*([self.path] if self.path is not None else []), *self.paths]


def dataset_rows(doc: YamlDoc, spec: Any) -> list[dict[str, Any]] | None:
    if spec is None:
        return None
    try:
        dataset = DatasetSpec.model_validate(spec)
    except ValidationError as exc:
        raise TaskError(explain(exc, doc, DatasetSpec, prefix=("dataset",))) from exc
    inline = enumerate(dataset.rows or [])
    rows = [Row(row, doc.where(("dataset", "rows", i)), f"dataset row {i}") for i, row in inline]
    for path in _files(doc, dataset):
        rows.extend(read_jsonl(path))
    if not rows:
        raise TaskError(
            f"{doc.where(('dataset',))}: dataset: no rows; add 'rows', or 'path' / 'paths' with JSONL rows"
        )
    for row in rows:
        _check_row(row, dataset.id_field)
    first: dict[str, str] = {}
    for row in rows:
        row_id = str(row.data[dataset.id_field])
        if row_id in first:
            raise TaskError(
                f"{row.where}: {row.label}: id {row_id!r} is also the id of the row at {first[row_id]}"
            )
        first[row_id] = row.where
    selected = [{**r.data, "__id__": str(r.data[dataset.id_field])} for r in rows]
    return select_rows(dataset, selected, doc.where(("dataset",)))


class Row(NamedTuple):
    """A dataset row and where it was written: ``rows.jsonl:12`` (its file and 1-based line), or
    ``task.yaml:7`` for an inline one."""

    data: dict[str, Any]
    where: str
    label: str = "dataset row"


def _check_row(row: Row, id_field: str) -> None:
    if id_field not in row.data:
        raise TaskError(
            f"{row.where}: {row.label} has no {id_field!r} (id_field); "
            f"its fields: {', '.join(row.data) or 'none'}"
        )
    if not ROW_ID.fullmatch(str(row.data[id_field])):
        raise TaskError(
            f"{row.where}: {row.label}: {id_field} {row.data[id_field]!r} cannot be part of a task id: "
            "use letters, digits, '.', '_' and '-', starting and ending with a letter or digit, "
            "at most 80 characters"
        )


def _files(doc: YamlDoc, dataset: DatasetSpec) -> list[Path]:
    """The dataset's JSONL files, each once (``a.jsonl`` and ``./a.jsonl`` are one file)."""
    found: dict[Path, Path] = {}
    locs = [("dataset", "path")] * (dataset.path is not None) + [
        ("dataset", "paths", i) for i in range(len(dataset.paths))
    ]
    for relative, loc in zip(dataset.files, locs, strict=True):
        path = doc.path.resolve().parent / relative
        problem = not_readable(path)
        if problem is not None:
            what = "not found" if problem == "not found" else f"is {problem}"
            raise TaskError(f"{doc.where(loc)}: dataset file {relative!r} {what} ({path})")
        found.setdefault(path.resolve(), path)
    return list(found.values())


def read_jsonl(path: Path) -> list[Row]:
    """The rows of a JSONL dataset file, each with its file and 1-based line."""
    lines = read_text_file(path, kind=TaskError, what="dataset").split("\n")
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskError(f"{path}:{number}: invalid JSON in dataset: {exc.msg}") from exc
        except RecursionError as exc:
            raise TaskError(f"{path}:{number}: dataset row nested too deep") from exc
        if not isinstance(data, dict):
            raise TaskError(
                f"{path}:{number}: dataset row is not an object (a JSON {_json_kind(data)}); "
                'each line must be one object, like {"id": "a", ...}'
            )
        rows.append(Row(data, f"{path}:{number}"))
    return rows


JSON_KINDS = ((bool, "boolean"), (int, "number"), (float, "number"), (str, "string"), (list, "array"))


def _json_kind(value: Any) -> str:
    """``array``, ``string``, ``number``, ``boolean`` or ``null``: what a JSON value is."""
    return next((name for kind, name in JSON_KINDS if isinstance(value, kind)), "null")


def substitute_row(doc: YamlDoc, data: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """Fan-out: a per-row task id, and ``${row.x}`` replaced in the prompt and every criterion string."""
    row_id = row.pop("__id__")
    missing: set[str] = set()

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            for name in ROW_REF.findall(value):
                if name not in row:
                    missing.add(name)
            return ROW_REF.sub(lambda m: str(row.get(m.group(1), m.group(0))), value)
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    out = {k: v for k, v in data.items() if k != "dataset"}
    out["task_id"] = f"{data.get('task_id', 'task')}.{row_id}"
    prompt_file = out.get("initial_prompt_file")
    if isinstance(prompt_file, str) and "initial_prompt" not in out:  # its ${row.x} are substituted too
        path = doc.path.resolve().parent / prompt_file
        if path.is_file():
            out["initial_prompt"] = read_text_file(path, kind=TaskError, what="prompt")
            del out["initial_prompt_file"]
    for key in ("initial_prompt", "success_criteria", "description", "reference_solution"):
        if key in out:
            out[key] = fill(out[key])
    if missing:
        raise TaskError(
            f"{doc.where(('dataset',))}: the task references ${{row.{sorted(missing)[0]}}} but row "
            f"{row_id!r} has no such field; its fields: {', '.join(k for k in row)}"
        )
    return out
