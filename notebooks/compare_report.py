# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Comparison report
#
# Does the candidate variant do better than the baseline? Variants are compared **paired on tasks**: for
# each task both variants ran, take the difference of the two task means (repeats averaged first), then
# report the mean difference with its 95 % interval and a paired test. A difference is called only when
# its interval excludes "no difference" *and* p < 0.05; otherwise the verdict is **inconclusive**, shown
# with the minimum detectable effect (the smallest true difference the same test would call 80 % of the
# time with this many tasks). Invalid episodes are excluded; a task without a valid episode in one
# variant drops out of the pair.
#
# **What is estimated.** By default the intervals describe a *population of tasks like these*: the spread
# between tasks counts as uncertainty, so the answer generalises beyond the tasks that ran. With
# `estimand=fixed_tasks` they describe exactly these tasks (only run-to-run noise counts; needs repeats).

# %% tags=["parameters"]
run_dirs: str = "../runs/latest"  # run directories, comma-separated
baseline: str = ""  # baseline variant; empty: 'baseline' if present, else the first
candidate: str = ""  # candidate variant; empty: the first other variant
metric: str = "passed"  # primary metric for all pairs (Holm) and for planning
tags: str = ""  # headline tasks: only these tags, comma-separated; empty: the experiment's compare block
exclude_tags: str = ""  # headline tasks: leave out these tags, comma-separated
estimand: str = "population"  # population (tasks like these) or fixed_tasks (exactly these tasks)
adjust: str = "none"  # verdicts across the report's metrics: none (each on its own) or holm
summary_path: str = ""  # file for the headline numbers as JSON; empty: not written

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Markdown, display

import coder_eval.analysis as ca
from coder_eval.analysis import plots
from coder_eval.analysis.amounts import MIN_TASKS
from coder_eval.analysis.notebook import REPORT_METRICS, load_report_runs, show_scripted_banner, trajectory_links, variant_pair, write_summary
from coder_eval.analysis.selection import compare_selection

pd.set_option("display.precision", 3)
pd.set_option("display.max_colwidth", 160)
if adjust not in ("none", "holm"):
    raise ValueError(f"adjust must be 'none' or 'holm' (got {adjust!r})")
runs, notes = load_report_runs(run_dirs)
show_scripted_banner(runs.episodes)
declared = compare_selection(p.strip() for p in run_dirs.split(",") if p.strip())


def split(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


chosen = ca.headline_tasks(
    runs.episodes, runs.criteria, split(tags) or declared.tags, split(exclude_tags) or declared.exclude_tags
)
episodes = chosen.episodes
baseline, candidate = variant_pair(episodes, baseline, candidate)
verdicts = {"a_better": f"{candidate} better", "b_better": f"{baseline} better", "inconclusive": "inconclusive"}
scripted = bool(runs.episodes.scripted.any())

# %% [markdown]
# ## What is compared

# %%
for note in notes:
    display(Markdown(f"**Note:** {note}"))
comparisons = [ca.compare(episodes, candidate, baseline, m, estimand=estimand) for m in REPORT_METRICS]
table = ca.comparisons_frame(comparisons)
first = comparisons[0]
pair = episodes[episodes.variant_id.isin([baseline, candidate])]
display(
    Markdown(
        f"**{candidate}** (candidate) against **{baseline}** (baseline), runs "
        f"{', '.join(sorted(runs.episodes.run_id.unique()))}. **Every number below covers the headline: "
        f"{chosen.description}.** {first.n_tasks} tasks paired, up to {first.n_repeats} repeats per task, "
        f"{first.n_excluded_tasks} tasks excluded (no valid episode in one variant), "
        f"{int((pair.outcome == 'invalid').sum())} invalid episodes excluded. Intervals describe "
        f"{'a population of tasks like these' if estimand == 'population' else 'exactly these tasks'}."
    )
)
display(Markdown("Tasks in the headline: " + ", ".join(f"`{t}`" for t in chosen.tasks)))
pd.crosstab(pair.variant_id, pair.outcome, margins=True, margins_name="total")

# %% [markdown]
# ### Classification tasks (not in the headline)
#
# Tasks whose only criteria are classification ones (a label expected and observed, like the rows of a
# skill-trigger dataset) measure a classifier, not whether the work got done: they are scored here as
# classifications (see the classification report for the confusion matrix) and never pooled into the
# pass-rate headline.

# %%
labelled = runs.criteria[runs.criteria.task_id.isin(chosen.classification_tasks)]
classified = []
for criterion in sorted(labelled.criterion_id.unique()):
    for variant in sorted(labelled.variant_id.unique()):
        result = ca.classification(labelled[labelled.variant_id == variant], criterion)
        classified.append(
            {"criterion": criterion, "variant": variant, "items": result.n, "accuracy": result.accuracy,
             "accuracy 95% CI": f"[{result.accuracy_low:.2f}, {result.accuracy_high:.2f}]",
             "macro F1": result.macro_f1, "method": result.accuracy_method}
        )
classification_table = pd.DataFrame(classified)
if classified:
    display(Markdown(f"{len(chosen.classification_tasks)} classification-only tasks:"))
    display(classification_table)
else:
    display(Markdown("None: every task has a graded (non-classification) criterion."))

# %% [markdown]
# ## Every metric
#
# `diff` is candidate − baseline. For pass rates and scores the verdict rests on the difference. For
# tokens, cost, duration, turns and tool calls *lower is better* and the verdict rests on the **ratio**:
# the typical factor by which the candidate's task mean differs from the baseline's (geometric mean over
# tasks, exact sign-flip test and t interval on the log ratios); their `diff` interval is descriptive
# and approximate. Amounts get no verdict below the minimum number of tasks shown. `p (Holm)` adjusts the
# p-values for testing several metrics at once (Holm); it sets the verdicts when the report is rendered
# with `-p adjust=holm`. The intervals are **not** adjusted: each is a 95 % interval on its own.

# %%
adjusted = ca.compare_metrics(episodes, candidate, baseline, REPORT_METRICS, estimand=estimand)
shown_verdicts = adjusted.verdict if adjust == "holm" else table.verdict


def p_text(p: float) -> str:
    return "n/a" if pd.isna(p) else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def ratio_text(row: pd.Series) -> str:
    if pd.isna(row.ratio):
        return ""
    return f"{row.ratio:.2f} [{row.ratio_ci_low:.2f}, {row.ratio_ci_high:.2f}]"


def mde_text(row: pd.Series) -> str:
    if row.basis == "ratio":
        return "none at this T" if pd.isna(row.mde_ratio) else f"×{row.mde_ratio:.2f}"
    return "none at this T" if pd.isna(row.mde) else f"{row.mde:.3g}"


shown = pd.DataFrame(
    {
        "metric": table.metric,
        candidate: table.mean_a.map("{:.3g}".format),
        baseline: table.mean_b.map("{:.3g}".format),
        "diff [95% CI, unadjusted]": [f"{d:+.3g} [{lo:.3g}, {hi:.3g}]" for d, lo, hi in zip(table["diff"], table.ci_low, table.ci_high)],
        "ratio [95% CI, unadjusted]": table.apply(ratio_text, axis=1),
        "verdict on": table.basis,
        "p": table.p_value.map(p_text),
        "p (Holm)": adjusted.p_adjusted.map(p_text),
        "verdict": shown_verdicts.map(verdicts),
        "mde": table.apply(mde_text, axis=1),
        "min T": table.min_tasks.map(lambda t: str(t) if t else ""),
    }
).set_index("metric")
display(shown)
display(
    Markdown(
        f"Verdicts use {'Holm-adjusted p-values across these ' + str(len(table)) + ' metrics' if adjust == 'holm' else 'unadjusted p-values: each metric on its own (render with adjust=holm to control the chance of any false call across the ' + str(len(table)) + ' metrics)'}. "
        f"Amounts: no verdict below {MIN_TASKS} paired tasks (an exact sign-flip test cannot reach p < 0.05 "
        "with fewer). How each number was computed:"
    )
)
table.set_index("metric")[["test", "method", "ratio_method", "correlation", "n_tasks", "n_repeats", "estimand"]]

# %% [markdown]
# **A second opinion on the pass rate.** A mixed-effects logistic model (a random intercept per task)
# estimates the candidate's odds ratio within a task. It is shown only when its verdict differs from the
# paired test's.

# %%
mixed = ca.compare(episodes, candidate, baseline, "passed", method="mixed")
primary_pass = table.set_index("metric").loc["passed"]
if mixed.verdict != primary_pass.verdict:
    display(Markdown(f"**The mixed model disagrees with the paired test** ({verdicts[mixed.verdict]} vs {verdicts[primary_pass.verdict]}):"))
    display(
        pd.DataFrame(
            {
                "": ["paired test (primary)", "mixed-effects logistic"],
                "diff [95% CI]": [
                    f"{primary_pass['diff']:+.3g} [{primary_pass.ci_low:.3g}, {primary_pass.ci_high:.3g}]",
                    f"{mixed.diff:+.3g} [{mixed.ci_low:.3g}, {mixed.ci_high:.3g}]",
                ],
                "odds ratio [95% CI]": ["", f"{mixed.ratio:.2f} [{mixed.ratio_ci_low:.2f}, {mixed.ratio_ci_high:.2f}]"],
                "p": [p_text(primary_pass.p_value), p_text(mixed.p_value)],
                "verdict": [verdicts[primary_pass.verdict], verdicts[mixed.verdict]],
                "method": [primary_pass.test, f"{mixed.test}; {mixed.method}"],
            }
        ).set_index("")
    )
else:
    display(Markdown(f"The mixed model agrees ({verdicts[mixed.verdict]}; odds ratio {mixed.ratio:.2f}, p = {p_text(mixed.p_value)})."))

# %%
fig, axes = plt.subplots(len(table), 1, figsize=(8, 1.15 * len(table) + 0.5))
for ax, index in zip(axes, table.index):
    plots.forest_plot(table.loc[[index]], ax)
    ax.set_xlabel("")
axes[-1].set_xlabel(f"{candidate} − {baseline} (ratio {candidate} / {baseline} for amounts; 95% CI; green/red: called, grey: inconclusive)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Tasks that flipped
#
# Tasks whose pass rate over valid episodes differs between the two variants, largest change first.
# `pass→fail` reads from baseline to candidate: the candidate lost a task the baseline passed (a
# regression); `fail→pass` is a gain. Links open the trajectories (JSONL, one event per line).

# %%
flipped = ca.flips(episodes, baseline, candidate)
counts = flipped.direction.value_counts().reindex(["pass→fail", "fail→pass"], fill_value=0)
display(Markdown(f"**{counts['fail→pass']} gained** (fail→pass), **{counts['pass→fail']} lost** (pass→fail)."))
links = flipped.assign(
    paths_a=flipped.paths_a.map(trajectory_links), paths_b=flipped.paths_b.map(trajectory_links)
).rename(
    columns={
        "pass_rate_a": f"pass rate {baseline}",
        "pass_rate_b": f"pass rate {candidate}",
        "n_a": f"runs {baseline}",
        "n_b": f"runs {candidate}",
        "paths_a": f"trajectories {baseline}",
        "paths_b": f"trajectories {candidate}",
    }
)
display(HTML(links.to_html(escape=False, index=False, float_format="{:.2f}".format)))
if len(flipped):
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(flipped) + 1.5))
    plots.flips_heatmap(pair, ax)
    ax.set_title("Pass rate of the flipped tasks")
    plt.show()

# %% [markdown]
# ## All pairs
#
# With more than two variants, every pair is compared on the primary metric and the p-values are
# adjusted for the number of pairs (Holm); the verdict uses the adjusted p-value.

# %%
if episodes.variant_id.nunique() > 2:
    all_pairs = ca.compare_all(episodes, metric)
    display(all_pairs[["a", "b", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_value", "p_adjusted", "verdict", "method"]])
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(all_pairs) + 1.2))
    plots.forest_plot(all_pairs, ax)
    ax.set_title(f"All pairs on {metric} (Holm-adjusted verdicts)")
    plt.show()
else:
    all_pairs = None
    display(Markdown("Two variants only: the comparison above is the only pair."))

# %% [markdown]
# ## How many tasks a conclusive answer needs
#
# From these runs as a pilot. The power of a design is the chance that the verdict gets called when the
# true effect has a given size; it is computed for the test that is actually run (simulated from the
# pilot's own per-task differences, so the exact tests' coarseness with few tasks counts). Planning
# another number of repeats splits the variance of the differences into a between-task part and a
# within-task part that shrinks with repeats, and uses a normal approximation.

# %%
primary = ca.compare(episodes, candidate, baseline, metric, estimand=estimand)
current_mde = ca.mde(episodes, candidate, baseline, metric)
on_ratio = primary.basis == "ratio"
observed = primary.ratio if on_ratio else primary.diff
observed_power = ca.power_at(episodes, candidate, baseline, observed, metric) if observed not in (0.0, 1.0) and pd.notna(observed) else float("nan")
if on_ratio:
    effects = [1.1, 1.25, 1.5]
elif metric in ("passed", "score"):
    effects = [0.05, 0.1, 0.2]
else:
    effects = [f * abs(primary.mean_b) for f in (0.1, 0.2, 0.5)]
effects = sorted({*effects, abs(observed) if not on_ratio else max(observed, 1 / observed)} - {0.0, 1.0})
ks = sorted({1, 3, 5, primary.n_repeats}) if primary.n_repeats >= 2 else [primary.n_repeats]
label = "ratio" if on_ratio else "δ"
plan = pd.DataFrame(
    [
        {
            "repeats": k,
            f"mde at {primary.n_tasks} tasks": ca.mde(episodes, candidate, baseline, metric, n_repeats=k),
            **{
                f"tasks for {label} = {e:.3g}": ca.required_tasks(episodes, candidate, baseline, e, metric=metric, n_repeats=k)
                for e in effects
            },
        }
        for k in ks
    ]
).set_index("repeats")
display(
    Markdown(
        f"On **{metric}**, with {primary.n_tasks} tasks and {primary.n_repeats} repeats, the smallest "
        f"{'ratio' if on_ratio else 'difference'} these runs would call 80 % of the time is **{current_mde:.3g}**; "
        f"the observed {'ratio' if on_ratio else 'difference'} is {observed:.3g} ({verdicts[primary.verdict]}). "
        + (
            "No effect was observed, so there is no observed effect to compute the power for."
            if pd.isna(observed_power)
            else f"**The power this run had** to call an effect as large as the one observed: **{observed_power:.0%}**."
            + (" (Low power: an inconclusive verdict here says little.)" if observed_power < 0.5 else "")
        )
    )
)
plan

# %%
write_summary(
    summary_path,
    run_ids=sorted(runs.episodes.run_id.unique()),
    baseline=baseline,
    candidate=candidate,
    metric=metric,
    scripted=scripted,
    headline_tasks=chosen.tasks,
    headline=chosen.description,
    classification_tasks=chosen.classification_tasks,
    classification=classification_table,
    estimand=estimand,
    comparisons=table,
    comparisons_adjusted=adjusted,
    adjust=adjust,
    mixed=mixed,
    flips=flipped.drop(columns=["paths_a", "paths_b"]),
    n_gained=counts["fail→pass"],
    n_lost=counts["pass→fail"],
    all_pairs=all_pairs,
    mde=current_mde,
    power_observed=observed_power,
    plan=plan.reset_index(),
)
