"""The labels file ``coder-eval calibrate`` reads: people's verdicts on judged criteria.

One label a line (JSON Lines, ``.jsonl``) or a row (CSV with a header, ``.csv`` in any case; a
byte-order mark, as spreadsheet programs write one, is read past)::

    {"episode_id": "fix-bug--with_skill--r0", "criterion_id": "judge", "verdict": "pass", "rater": "ana"}
    {"episode_id": "fix-bug--with_skill--r0", "criterion_id": "judge", "score": 0.8}

``episode_id`` and ``criterion_id`` name the judged criterion of an episode; ``run_id`` narrows it to
one run when several are loaded. ``verdict`` is ``pass`` or ``fail`` (also ``true``/``false``, ``1``/``0``);
``score`` is in [0, 1] (with no ``verdict``, a score of 0.5 or more is a pass); ``rater`` names the
person (default ``rater``). A bad line is an ``InputError`` naming the file, line and field.

Example: ``labels = read_labels(Path("labels.jsonl"))`` -> a frame of run_id, episode_id,
criterion_id, rater, passed, score
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coder_eval.errors import InputError

LABEL_COLUMNS = ["run_id", "episode_id", "criterion_id", "rater", "passed", "score"]
TRUE, FALSE = {"pass", "true", "1", "yes"}, {"fail", "false", "0", "no"}


class Label(BaseModel):
    """One person's verdict (or score) on one criterion of one episode."""

    model_config = ConfigDict(extra="forbid")
    episode_id: str = Field(min_length=1)
    criterion_id: str = Field(min_length=1)
    run_id: str | None = None
    verdict: bool | None = None
    score: float | None = Field(default=None, ge=0, le=1)
    rater: str = "rater"

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict(cls, value: Any) -> Any:
        if value is None or isinstance(value, bool) or value == "":
            return None if value == "" else value
        text = str(value).strip().lower()
        if text in TRUE | FALSE:
            return text in TRUE
        raise ValueError(f"verdict {value!r}: write pass or fail")

    @field_validator("score", "run_id", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        return None if value == "" else value

    @model_validator(mode="after")
    def _something(self) -> Label:
        if self.verdict is None and self.score is None:
            raise ValueError("a label needs a verdict or a score")
        return self

    @property
    def passed(self) -> bool:
        return self.verdict if self.verdict is not None else (self.score or 0.0) >= 0.5


def read_labels(path: Path) -> pd.DataFrame:
    """The labels of a ``.jsonl`` or ``.csv`` file, one row each (``LABEL_COLUMNS``)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the labels file: {exc}") from exc
    records = csv_records(path, text) if path.suffix.lower() == ".csv" else json_records(path, text)
    labels = []
    for line, record in records:
        try:
            label = Label.model_validate(record)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "(the label)"
            raise InputError(f"{path}:{line}: {where}: {first['msg']}") from exc
        labels.append(
            [label.run_id, label.episode_id, label.criterion_id, label.rater, label.passed, label.score]
        )
    if not labels:
        raise InputError(f"{path}: no labels (docs/statistics.md says what a labels file holds)")
    return pd.DataFrame(labels, columns=LABEL_COLUMNS)


def json_records(path: Path, text: str) -> list[tuple[int, Any]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except ValueError as exc:
            raise InputError(f"{path}:{number}: not JSON ({exc}); one label a line") from exc
    return records


def csv_records(path: Path, text: str) -> list[tuple[int, Any]]:
    """Each row (by its line number) as a dict of the header's columns; a row with more fields than
    the header is an ``InputError`` naming it (a short row's missing fields read as empty)."""
    rows = csv.DictReader(io.StringIO(text), restval="")
    records = []
    for row in rows:
        number = rows.line_num
        extra = row.pop(None, None)
        if extra:
            raise InputError(
                f"{path}:{number}: {len(rows.fieldnames or [])} columns in the header, "
                f"{len(rows.fieldnames or []) + len(extra)} fields in this row (a value holding a comma "
                "needs double quotes)"
            )
        records.append((number, row))
    return records
