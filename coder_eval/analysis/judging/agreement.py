"""Judge panels: agreement between votes, and what the judging cost.

A criterion that asks several judges stores ``details["votes"]``: a list of
``{"passed": bool, "score": float, "rationale": str, "input_tokens": int, "output_tokens": int,
"cost_usd": float}``.

Example::

    judge_votes(runs.criteria)         # one row per vote: who said what, with tokens and cost
    judge_agreement(runs.criteria)     # criterion_id, n_items, n_votes, share_unanimous, alpha
    evaluation_cost(runs.criteria)     # variant_id, n_votes, input_tokens, output_tokens, cost_usd
"""

from __future__ import annotations

from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from coder_eval.analysis.stats.intervals import NAN
from coder_eval.analysis.stats.metrics import check_columns
from coder_eval.errors import AnalysisError

AGREEMENT_COLUMNS = ["criterion_id", "n_items", "n_votes", "share_unanimous", "alpha", "note"]
VOTE_TOKENS = ("input_tokens", "output_tokens", "cost_usd")


def votes_of(details: Any) -> list[dict[str, Any]]:
    """The votes in a criterion's details, or [] when it has none."""
    votes = details.get("votes") if isinstance(details, dict) else None
    return [v for v in votes if isinstance(v, dict)] if isinstance(votes, list) else []


def voted(criteria: pd.DataFrame) -> pd.DataFrame:
    """Criterion rows that carry votes, with a ``votes`` column."""
    check_columns(criteria, ["criterion_id", "details"], "criteria")
    frame = criteria.assign(votes=criteria["details"].map(votes_of))
    frame = frame[frame["votes"].map(len) > 0]
    if frame.empty:
        raise AnalysisError("no criterion has details['votes']; judge agreement needs a judge panel")
    return frame


def judge_votes(criteria: pd.DataFrame, rationale_chars: int = 160) -> pd.DataFrame:
    """One row per vote: the episode, criterion, vote number, passed, score, the start of the rationale,
    tokens and cost — what each judge said, next to the panel's verdict (``panel_passed``).

    Example: ``judge_votes(runs.criteria).query("not panel_passed")``
    """
    frame = voted(criteria)
    rows = [
        {
            "episode_id": row["episode_id"],
            "variant_id": row["variant_id"],
            "criterion_id": row["criterion_id"],
            "panel_passed": bool(row["passed"]),
            "vote": number,
            "passed": bool(vote.get("passed")),
            "score": vote.get("score"),
            "rationale": str(vote.get("rationale", ""))[:rationale_chars],
            **{key: vote.get(key) for key in VOTE_TOKENS},
        }
        for _, row in frame.iterrows()
        for number, vote in enumerate(row["votes"], start=1)
    ]
    return pd.DataFrame(rows)


def judge_agreement(criteria: pd.DataFrame) -> pd.DataFrame:
    """Per voted criterion: items, votes per item, share of unanimous items, Krippendorff's α (nominal).

    α is NaN when every vote is the same (no variation to agree on), said in ``note``.
    Example: ``judge_agreement(runs.criteria)``
    """
    rows = []
    for criterion_id, part in voted(criteria).groupby("criterion_id", sort=True):
        votes = [[float(bool(v.get("passed"))) for v in vs] for vs in part["votes"]]
        width = max(map(len, votes))
        data = np.array([vs + [np.nan] * (width - len(vs)) for vs in votes]).T  # raters × items
        unanimous = float(np.mean([len(set(vs)) == 1 for vs in votes]))
        values = set(np.unique(data[~np.isnan(data)]))
        if len(values) < 2:
            alpha, note = NAN, "every vote identical: alpha undefined"
        else:
            alpha, note = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")), ""
        rows.append((criterion_id, len(votes), width, unanimous, alpha, note))
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def evaluation_cost(criteria: pd.DataFrame, by: str = "variant_id") -> pd.DataFrame:
    """Judge tokens and cost summed from the votes, per group.

    Example: ``evaluation_cost(runs.criteria)["cost_usd"].sum()``
    """
    frame = voted(criteria)
    check_columns(frame, [by], "criteria")
    exploded = frame[[by, "votes"]].explode("votes")
    parts = pd.DataFrame(
        [{k: v.get(k) for k in VOTE_TOKENS} for v in exploded["votes"]], index=exploded.index
    )
    parts = parts.apply(pd.to_numeric, errors="coerce").assign(**{by: exploded[by], "n_votes": 1})
    totals: pd.DataFrame = parts.groupby(by, sort=True)[["n_votes", *VOTE_TOKENS]].sum(min_count=1)
    return totals.reset_index()
