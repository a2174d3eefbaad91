"""Judges calibrated against people: how far each judged criterion agrees with human labels.

For each criterion the labels name, over the episodes both the judge and the people graded:

- the people's verdict per episode is the majority of its raters (an even split is left out and
  counted as ``ties``);
- **agreement**: the share of episodes where the judge's pass/fail equals the people's, and **Cohen's
  kappa** (agreement beyond chance), with a 95 % interval from the Jeffreys posterior of the
  judge × people table (``kappa_interval``: the episode is the unit; 9,999 draws, seeded), which
  holds its coverage where a bootstrap over episodes does not (few episodes of one verdict);
- the **confusion** of verdicts: judge pass & people pass, judge pass & people fail, ...;
- **score bias** where the people gave scores: the mean of judge score − people's mean score, with a
  t interval over episodes;
- **agreement between people** where there are several raters: Krippendorff's alpha (nominal).

**Fit to gate** (the stated rule): at least ``MIN_ITEMS`` labelled episodes, at least
``MIN_MINORITY`` of them on each side of the people's verdict (pass and fail), a kappa interval whose
lower end is at least ``MIN_KAPPA`` (0.6, "substantial" agreement), and, where scores were labelled,
a bias interval inside ±``MAX_BIAS``. A judge that misses any of them is reported with why.

Example::

    found = calibrate(load_runs("runs/latest").criteria, read_labels(Path("labels.jsonl")))
    found.table()           # one row per criterion: n, agreement, kappa [low, high], confusion, bias, fit
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import krippendorff
import numpy as np
import pandas as pd
from scipy import stats

from coder_eval.analysis.stats.intervals import N_RESAMPLES, NAN, SEED
from coder_eval.errors import AnalysisError

MIN_ITEMS = 30
MIN_MINORITY = 5
"""Labelled episodes the people passed, and failed, that a judge fit to gate on needs at least: with
fewer of one verdict kappa rests on a handful of episodes (docs/statistics.md)."""
MIN_KAPPA = 0.6
MAX_BIAS = 0.1
KAPPA_METHOD = "Jeffreys posterior of the judge x people table (Dirichlet, counts + 1/2), equal-tailed"


@dataclass(frozen=True)
class JudgeCalibration:
    """One criterion against the people."""

    criterion_id: str
    n_items: int
    ties: int
    agreement: float
    kappa: float
    kappa_low: float
    kappa_high: float
    confusion: dict[str, int]
    bias: float
    bias_low: float
    bias_high: float
    n_raters: int
    raters_alpha: float
    fit: bool
    why: str
    minority: int = 0
    """Episodes of the people's rarer verdict (pass or fail)."""
    raters_note: str = ""
    """Why ``raters_alpha`` is undefined, when it is."""


@dataclass(frozen=True)
class Calibration:
    """Every labelled criterion, and the labels that matched no graded criterion."""

    judges: tuple[JudgeCalibration, ...]
    unmatched: int

    def table(self) -> pd.DataFrame:
        """One row per criterion (the confusion as four columns)."""
        rows = []
        for j in self.judges:
            row = {k: v for k, v in j.__dict__.items() if k != "confusion"}
            rows.append(row | j.confusion)
        return pd.DataFrame(rows)


def kappa(judge: np.ndarray, people: np.ndarray) -> np.ndarray:
    """Cohen's kappa of binary verdicts along the last axis (NaN where chance agreement is 1)."""
    observed = (judge == people).mean(axis=-1)
    p_judge, p_people = judge.mean(axis=-1), people.mean(axis=-1)
    chance = p_judge * p_people + (1 - p_judge) * (1 - p_people)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), NAN)


def kappa_interval(judge: np.ndarray, people: np.ndarray, seed: int = SEED) -> tuple[float, float]:
    """95 % interval of kappa: the equal-tailed interval of its posterior when the four cells of the
    judge × people table (each episode in one) have a Dirichlet(counts + ½) posterior, the Jeffreys
    prior of a multinomial (``scipy.stats.dirichlet``; 9,999 draws, seeded).

    A bootstrap over episodes under-covers when one verdict is rare (77 % at 30 episodes with about 3
    of one verdict): most resamples hold 0 to 2 of them. ``benchmarks/kappa_coverage.py`` measures
    this interval. Example: ``kappa_interval(judge, people)`` -> ``(0.41, 0.88)``
    """
    cells = np.array([np.sum(a & b) for a in (judge, ~judge) for b in (people, ~people)], dtype=float)
    if not len(judge):
        return NAN, NAN
    draws = table_kappa(stats.dirichlet.rvs(cells + 0.5, size=N_RESAMPLES, random_state=seed))
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(low), float(high)


def table_kappa(cells: np.ndarray) -> np.ndarray:
    """Cohen's kappa of 2 × 2 tables given as cell shares along the last axis, in the order (judge
    pass & people pass, judge pass & people fail, judge fail & people pass, judge fail & people fail)."""
    observed = cells[..., 0] + cells[..., 3]
    p_judge, p_people = cells[..., 0] + cells[..., 1], cells[..., 0] + cells[..., 2]
    chance = p_judge * p_people + (1 - p_judge) * (1 - p_people)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(chance < 1, (observed - chance) / (1 - chance), NAN), dtype=float)


def score_bias(paired: pd.DataFrame) -> tuple[float, float, float]:
    """Mean judge score − people's score, and its t interval over episodes (NaN without scores)."""
    known = paired.dropna(subset=["score_person", "score"])
    if len(known) < 2:
        return NAN, NAN, NAN
    d = (known["score"] - known["score_person"]).to_numpy(float)
    if np.ptp(d) == 0:
        return float(d.mean()), float(d.mean()), float(d.mean())
    ci = stats.ttest_1samp(d, 0).confidence_interval(0.95)
    return float(d.mean()), float(ci.low), float(ci.high)


class RatersAlpha(NamedTuple):
    """How far several raters agree: their number, Krippendorff's alpha, and why it is undefined."""

    n_raters: int
    alpha: float
    note: str


def raters_alpha(labels: pd.DataFrame) -> RatersAlpha:
    """Raters and Krippendorff's nominal alpha between them; NaN with a reason with one rater, or when
    every label is the same (the formula is 0 / 0 there, as statsmodels and ``krippendorff`` say)."""
    raters = int(labels["rater"].nunique())
    if raters < 2:
        return RatersAlpha(raters, NAN, "one rater")
    matrix = labels.pivot_table(index="rater", columns="item", values="passed", aggfunc="first")
    data = matrix.astype(float).to_numpy()
    if np.unique(data[~np.isnan(data)]).size < 2:
        return RatersAlpha(raters, NAN, "every label identical: alpha undefined")
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    return RatersAlpha(raters, alpha, "")


def kappa_undefined(judge: np.ndarray, people: np.ndarray) -> str | None:
    """Why kappa is undefined, when it is: no episode, or judge and people all gave one verdict
    (agreement by chance is then 1, and kappa divides by 1 minus it)."""
    if len(judge) == 0:
        return "kappa undefined: no labelled episode the judge graded"
    if (judge == judge[0]).all() and (people == judge[0]).all():
        verdict = "pass" if judge[0] else "fail"
        return (
            f"kappa undefined: the judge and the people gave all {len(judge)} episodes a {verdict}, so "
            "agreement by chance is 1 (label episodes of both verdicts)"
        )
    return None


def fitness(
    n: int,
    low: float,
    bias: tuple[float, float, float],
    minority: int = MIN_MINORITY,
    undefined: str | None = None,
) -> tuple[bool, str]:
    """The gate rule, and why a judge misses it (``undefined``: why kappa has no value)."""
    misses = []
    if n < MIN_ITEMS:
        misses.append(f"{n} labelled episodes (needs {MIN_ITEMS})")
    if minority < MIN_MINORITY:
        misses.append(f"{minority} episodes of the people's rarer verdict (needs {MIN_MINORITY})")
    if undefined is not None:
        misses.append(undefined)
    elif np.isnan(low):
        misses.append("kappa undefined (no labelled episode)")
    elif not low >= MIN_KAPPA:
        misses.append(f"kappa's lower bound {low:.2f} < {MIN_KAPPA}")
    if not np.isnan(bias[0]) and not (bias[1] >= -MAX_BIAS and bias[2] <= MAX_BIAS):
        misses.append(f"score bias {bias[0]:+.2f} [{bias[1]:+.2f}, {bias[2]:+.2f}] outside ±{MAX_BIAS}")
    return not misses, "; ".join(misses) or "fit to gate"


def judge_row(criterion: str, graded: pd.DataFrame, labels: pd.DataFrame, seed: int) -> JudgeCalibration:
    """One criterion's calibration from its graded rows and its labels (joined on ``item``)."""
    votes = labels.groupby("item").agg(share=("passed", "mean"), score_person=("score", "mean"))
    ties = int((votes["share"] == 0.5).sum())
    votes = votes[votes["share"] != 0.5]
    paired = graded.set_index("item")[["passed", "score"]].join(votes, how="inner")
    judge = paired["passed"].to_numpy(bool)
    people = (paired["share"] > 0.5).to_numpy()
    n = len(paired)
    k = float(kappa(judge, people)) if n else NAN
    low, high = kappa_interval(judge, people, seed) if n else (NAN, NAN)
    bias = score_bias(paired)
    confusion = {
        f"judge_{j}_people_{p}": int(((judge == (j == "pass")) & (people == (p == "pass"))).sum())
        for j in ("pass", "fail")
        for p in ("pass", "fail")
    }
    minority = int(min(people.sum(), (~people).sum()))
    fit, why = fitness(n, low, bias, minority, kappa_undefined(judge, people))
    alpha = raters_alpha(labels)
    return JudgeCalibration(
        criterion, n, ties, float((judge == people).mean()) if n else NAN, k, low, high, confusion,
        *bias, alpha.n_raters, alpha.alpha, fit, why, minority, alpha.note,
    )  # fmt: skip


def calibrate(criteria: pd.DataFrame, labels: pd.DataFrame, seed: int = SEED) -> Calibration:
    """Each labelled criterion's agreement with the people (see the module docstring)."""
    graded = criteria[(criteria["outcome"] != "invalid") & criteria["error"].isna()]
    graded = graded.assign(item=graded["run_id"].astype(str) + "/" + graded["episode_id"].astype(str))
    runs = labels["run_id"].fillna("")
    by_episode = graded.drop_duplicates("episode_id").set_index("episode_id")["run_id"]
    if runs.eq("").any() and graded.groupby("episode_id")["run_id"].nunique().gt(1).any():
        raise AnalysisError("the runs loaded share episode ids: give each label its run_id")
    resolved = runs.where(runs != "", labels["episode_id"].map(by_episode))
    labels = labels.assign(item=resolved.astype(str) + "/" + labels["episode_id"].astype(str))
    known = set(zip(graded["item"], graded["criterion_id"], strict=True))
    matched = [(i, c) in known for i, c in zip(labels["item"], labels["criterion_id"], strict=True)]
    labels, unmatched = labels[matched], len(labels) - sum(matched)
    if labels.empty:
        raise AnalysisError(
            "no label names a graded criterion of the runs loaded (check episode and criterion ids)"
        )
    judges = [
        judge_row(str(c), graded[graded["criterion_id"] == c], group, seed)
        for c, group in labels.groupby("criterion_id", sort=True)
    ]
    return Calibration(tuple(judges), unmatched)
