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
# test it. Every verdict rests on one test, and the interval printed beside it is that test inverted:
# the interval excludes "no difference" exactly when the verdict is called. Otherwise the verdict is
# **inconclusive**, shown with the minimum detectable effect (the smallest true difference the same test
# would call 80 % of the time with this many tasks). Invalid episodes are excluded; a task without a
# valid episode in one variant drops out of the pair.
#
# **What is estimated.** By default the intervals describe a *population of tasks like these*: the spread
# between tasks counts as uncertainty, so the answer generalises beyond the tasks that ran. With
# `estimand=fixed_tasks` they describe exactly these tasks (only run-to-run noise counts; needs repeats).

# %% tags=["parameters"]
run_dirs: str = "../runs/latest"  # run directories, comma-separated
baseline: str = ""  # baseline variant; empty: 'baseline' if present, else the first
candidate: str = ""  # candidate variant; empty: the first other variant
metric: str = "passed"  # primary metric: first in the table, for all pairs (Holm) and for planning
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
from coder_eval.analysis import MIN_TASKS
from coder_eval.analysis import html_table, load_report_runs, md_text, show_scripted_banner, trajectory_links, write_summary
from coder_eval.analysis import planning
from coder_eval.analysis import REPORT_METRICS, Declaration, verdicts
from coder_eval.analysis import metric_table, p_value_text, verdict_text

pd.set_option("display.precision", 3)
pd.set_option("display.max_colwidth", 160)
runs, notes = load_report_runs(run_dirs)
show_scripted_banner(runs.episodes)


def split(text: str) -> tuple[str, ...] | None:
    return tuple(t.strip() for t in text.split(",") if t.strip()) or None


metrics = (metric, *(m for m in REPORT_METRICS if m != metric))
declaration = Declaration(baseline, candidate, metrics, adjust, estimand, split(tags), split(exclude_tags))  # type: ignore[arg-type]
v = verdicts(runs, declaration)
chosen, baseline, candidate = v.selection, v.baseline, v.candidate
episodes = chosen.episodes
scripted = bool(runs.episodes.scripted.any())

# %% [markdown]
# ## What is compared

# %%
for note in notes:
    display(Markdown(f"**Note:** {md_text(note)}"))
pair = episodes[episodes.variant_id.isin([baseline, candidate])]
if v.available:
    first = v.primary
    display(
        Markdown(
            f"**{md_text(candidate)}** (candidate) against **{md_text(baseline)}** (baseline), runs "
            f"{md_text(', '.join(sorted(runs.episodes.run_id.unique())))}. **Every number below covers the headline: "
            f"{md_text(chosen.description)}.** {first.n_tasks} tasks paired, up to {first.n_repeats} repeats per task, "
            f"{first.n_excluded_tasks} tasks excluded (no valid episode in one variant), "
            f"{int((pair.outcome == 'invalid').sum())} invalid episodes excluded. Intervals describe "
            f"{'a population of tasks like these' if estimand == 'population' else 'exactly these tasks'}."
        )
    )
    display(Markdown(f"**Headline:** {md_text(v.line())}."))
else:
    display(Markdown(f"**No comparison:** {md_text(v.note)}. The sections below say what there is instead."))
display(Markdown("Tasks in the headline: " + (", ".join(f"`{md_text(t)}`" for t in chosen.tasks) or "none")))
pd.crosstab(pair.variant_id, pair.outcome, margins=True, margins_name="total") if len(pair) else None

# %% [markdown]
# ### Stopping at the answer
#
# A run made with `--until-conclusive` ran its tasks in a random order recorded before the first
# result and stopped when an interval valid at every look (a confidence sequence) answered: the band
# below, narrowing as tasks complete, with 0 and ±delta. Other runs say so and skip this section.

# %%
from coder_eval.analysis import NOT_VALID_AFTER_STOPPING, plot_sequence, saved_text, stopping

stopped = stopping(runs.run_dirs)
if stopped is None:
    display(Markdown("Not a run that stopped at its answer: every task planned ran (a fixed design)."))
else:
    display(Markdown(f"**Stopped:** {md_text(stopped.reason)}. {md_text(saved_text(stopped))}."))
    plot_sequence(stopped)
    plt.show()
    display(Markdown(f"**Note:** {md_text(NOT_VALID_AFTER_STOPPING)}"))

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
# `effect` is what the verdict rests on, candidate against baseline. For pass rates and scores it is the
# difference (percentage points). For tokens, cost, duration, turns and tool calls *lower is better* and it
# is the **ratio**: the typical factor by which the candidate's task mean differs from the baseline's
# (geometric mean over tasks, exact sign-flip test on the log ratios); their difference of means is shown
# too, with a *descriptive* interval that is not the verdict's. The verdict's interval is the verdict's
# test inverted: it excludes "no difference" (0, or a ratio of 1) exactly when the verdict is called.
# Amounts get no verdict below the minimum number of tasks shown. `p (Holm)` adjusts the p-values for
# testing several metrics at once (Holm); it sets the verdicts when the report is rendered with
# `-p adjust=holm`, and each verdict's interval is then at its Holm step's level.

# %%
table = v.frame()
if v.available:
    display(metric_table(v.comparisons))
    display(
        Markdown(
            f"Verdicts use {'Holm-adjusted p-values across these ' + str(len(table)) + ' metrics' if adjust == 'holm' else 'unadjusted p-values: each metric on its own (render with adjust=holm to control the chance of any false call across the ' + str(len(table)) + ' metrics)'}. "
            f"Amounts: no verdict below {MIN_TASKS} paired tasks (an exact sign-flip test cannot reach p < 0.05 "
            "with fewer). How each number was computed:"
        )
    )
    display(table.set_index("metric")[["test", "verdict_method", "method", "correlation", "n_tasks", "n_repeats", "estimand"]])
else:
    display(Markdown(f"No comparison: {md_text(v.note)}."))

# %% [markdown]
# **A second opinion on the pass rate.** A mixed-effects logistic model (a random intercept per task)
# estimates the candidate's odds ratio within a task. It is shown only when its verdict differs from the
# paired test's.

# %%
mixed = ca.compare(episodes, candidate, baseline, "passed", method="mixed") if v.available else None
if mixed is not None:
    primary_pass = v.of("passed")
    if mixed.verdict != primary_pass.verdict:
        display(Markdown(f"**The mixed model disagrees with the paired test** ({md_text(verdict_text(mixed))} vs {md_text(verdict_text(primary_pass))}):"))
        display(
            pd.DataFrame(
                {
                    "": ["paired test (primary)", "mixed-effects logistic"],
                    "effect [verdict's interval]": [
                        f"{primary_pass.diff:+.3g} [{primary_pass.verdict_ci_low:.3g}, {primary_pass.verdict_ci_high:.3g}]",
                        f"odds ratio {mixed.ratio:.2f} [{mixed.ratio_ci_low:.2f}, {mixed.ratio_ci_high:.2f}]",
                    ],
                    "p": [p_value_text(primary_pass.p_value), p_value_text(mixed.p_value)],
                    "verdict": [verdict_text(primary_pass), verdict_text(mixed)],
                    "method": [primary_pass.test, f"{mixed.test}; {mixed.method}"],
                }
            ).set_index("")
        )
    else:
        display(Markdown(f"The mixed model agrees ({md_text(verdict_text(mixed))}; odds ratio {mixed.ratio:.2f}, p = {p_value_text(mixed.p_value)})."))

# %%
if v.available:
    fig, axes = plt.subplots(len(table), 1, figsize=(8, 1.15 * len(table) + 0.5), squeeze=False)
    for ax, index in zip(axes[:, 0], table.index):
        plots.forest_plot(table.loc[[index]], ax)
        ax.set_xlabel("")
    axes[-1, 0].set_xlabel(f"{plots.plain_text(candidate)} − {plots.plain_text(baseline)} (ratio for amounts; the verdict's interval; green/red: called, grey: inconclusive)")
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ## Tasks that flipped
#
# Tasks whose pass rate over valid episodes differs between the two variants, largest change first.
# `pass→fail` reads from baseline to candidate: the candidate lost a task the baseline passed (a
# regression); `fail→pass` is a gain. Links open the trajectories (JSONL, one event per line).

# %%
flipped = ca.flips(episodes, baseline, candidate) if v.available else pd.DataFrame(columns=["task_id", "direction", "paths_a", "paths_b"])
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
display(HTML(html_table(links, links=[f"trajectories {baseline}", f"trajectories {candidate}"], index=False, float_format="{:.2f}".format)))
if len(flipped):
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(flipped) + 1.5))
    plots.flips_heatmap(pair, ax)
    ax.set_title("Pass rate of the flipped tasks")
    plt.show()

# %% [markdown]
# ## All pairs
#
# With more than two variants, every pair is compared on the primary metric and the p-values are
# adjusted for the number of pairs (Holm); the verdict uses the adjusted p-value, and each verdict's
# interval is at its Holm step's level.

# %%
if episodes.variant_id.nunique() > 2:
    all_pairs = ca.compare_all(episodes, metric)
    display(all_pairs[["a", "b", "mean_a", "mean_b", "diff", "verdict_ci_low", "verdict_ci_high", "p_value", "p_adjusted", "verdict", "verdict_method"]])
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(all_pairs) + 1.2))
    plots.forest_plot(all_pairs, ax)
    ax.set_title(f"All pairs on {metric} (Holm-adjusted verdicts)")
    plt.show()
else:
    all_pairs = None
    display(Markdown("Two variants or fewer: the comparison above is the only pair."))

# %% [markdown]
# ## How many tasks a conclusive answer needs
#
# From these runs as a pilot. The power of a design is the chance that the verdict gets called when the
# true effect has a given size; it is computed for the test that is actually run (simulated from the
# pilot's own per-task differences, so the exact tests' coarseness with few tasks counts). Planning
# another number of repeats splits the variance of the differences into a between-task part and a
# within-task part that shrinks with repeats, and uses a normal approximation.

# %%
plan = planning(v, metric)
if plan is None:
    display(Markdown(f"Nothing to plan from: {md_text(v.note)}."))
else:
    primary = v.of(metric)
    scale = "ratio" if plan.on_ratio else "difference"
    observed = primary.ratio if plan.on_ratio else primary.diff
    display(
        Markdown(
            f"On **{metric}**, with {primary.n_tasks} tasks and {primary.n_repeats} repeats, the smallest "
            f"{scale} these runs would call 80 % of the time is **{'n/a' if pd.isna(plan.mde) else f'{plan.mde:.3g}'}**; "
            f"the observed {scale} is {observed:.3g} ({md_text(verdict_text(primary))}). "
            + (
                "There is no observed effect to compute the power for."
                if pd.isna(plan.power_observed)
                else f"**The power this run had** to call an effect as large as the one observed: **{plan.power_observed:.0%}**."
                + (" (Low power: an inconclusive verdict here says little.)" if plan.power_observed < 0.5 else "")
            )
            + (f" Not computed: {md_text(plan.note)}." if plan.note else "")
        )
    )
    display(plan.table)

# %%
write_summary(
    summary_path,
    run_ids=sorted(runs.episodes.run_id.unique()),
    baseline=baseline,
    candidate=candidate,
    metric=metric,
    scripted=scripted,
    verdict=v.headline(),
    headline_tasks=chosen.tasks,
    headline=chosen.description,
    classification_tasks=chosen.classification_tasks,
    classification=classification_table,
    estimand=estimand,
    comparisons=table,
    adjust=adjust,
    mixed=mixed,
    flips=flipped.drop(columns=["paths_a", "paths_b"]),
    n_gained=counts["fail→pass"],
    n_lost=counts["pass→fail"],
    all_pairs=all_pairs,
    mde=None if plan is None else plan.mde,
    power_observed=None if plan is None else plan.power_observed,
    plan=None if plan is None else plan.table.reset_index(),
)
