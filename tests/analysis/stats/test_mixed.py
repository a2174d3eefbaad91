import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit
from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

from coder_eval.analysis import compare
from coder_eval.analysis.stats.mixed import TEST
from coder_eval.errors import AnalysisError
from tests.analysis.builders import episodes_frame


def ab_frame(seed: int = 11, n_tasks: int = 15, shift: float = 1.5):
    rng = np.random.default_rng(seed)
    intercepts = rng.normal(0.0, 1.0, n_tasks)
    return episodes_frame(
        {
            v: {
                f"t{i}": ["pass" if rng.random() < expit(u + s) else "fail" for _ in range(3)]
                for i, u in enumerate(intercepts)
            }
            for v, s in (("a", shift), ("b", 0.0))
        }
    )


def test_mixed_model_matches_a_direct_statsmodels_fit() -> None:
    df = ab_frame()
    c = compare(df, "a", "b", method="mixed")
    rows = df.assign(
        y=df["passed"].astype(float), treat=(df["variant_id"] == "a").astype(float), task=df["task_id"]
    )
    result = BinomialBayesMixedGLM.from_formula("y ~ treat", {"task": "0 + C(task)"}, rows).fit_vb()
    beta, sd = result.fe_mean[1], result.fe_sd[1]
    z = stats.norm.ppf(0.975)
    assert c.ratio == pytest.approx(math.exp(beta), rel=1e-4)
    assert (c.ratio_ci_low, c.ratio_ci_high) == pytest.approx(
        (math.exp(beta - z * sd), math.exp(beta + z * sd)), rel=1e-4
    )
    assert c.p_value == pytest.approx(2 * stats.norm.sf(abs(beta / sd)), rel=1e-3)
    assert c.test == TEST and c.basis == "ratio" and c.ci_low < c.diff < c.ci_high
    assert c.verdict == ("a_better" if c.p_value < 0.05 and c.ratio_ci_low > 1 else "inconclusive")


def test_mixed_model_agrees_with_the_paired_test_on_a_clear_effect() -> None:
    df = ab_frame(n_tasks=25, shift=2.5)
    assert compare(df, "a", "b", method="mixed").verdict == compare(df, "a", "b").verdict == "a_better"


def test_mixed_model_says_when_it_cannot_fit() -> None:
    df = episodes_frame({v: {f"t{i}": ["pass"] * 2 for i in range(4)} for v in "ab"})
    c = compare(df, "a", "b", method="mixed")
    assert np.isnan(c.p_value) and c.verdict == "inconclusive" and "same outcome" in c.method
    df["cost_usd"] = 1.0
    with pytest.raises(AnalysisError, match="not binary"):
        compare(df, "a", "b", "cost_usd", method="mixed")
