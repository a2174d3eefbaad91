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
# its interval excludes 0 *and* p < 0.05; otherwise the verdict is **inconclusive**, shown with the
# minimum detectable effect (the smallest true difference this many tasks would detect 80 % of the time).
# Invalid episodes are excluded; a task without a valid episode in one variant drops out of the pair.

# %% tags=["parameters"]
run_dirs: str = "../runs/latest"  # run directories, comma-separated
baseline: str = ""  # baseline variant; empty: 'baseline' if present, else the first
candidate: str = ""  # candidate variant; empty: the first other variant
metric: str = "passed"  # primary metric for all pairs (Holm) and for planning
summary_path: str = ""  # file for the headline numbers as JSON; empty: not written

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Markdown, display

import coder_eval.analysis as ca
from coder_eval.analysis import plots
from coder_eval.analysis.notebook import REPORT_METRICS, load_report_runs, show_scripted_banner, trajectory_links, variant_pair, write_summary

pd.set_option("display.precision", 3)
runs, notes = load_report_runs(run_dirs)
episodes = runs.episodes
show_scripted_banner(episodes)
baseline, candidate = variant_pair(episodes, baseline, candidate)
verdicts = {"a_better": f"{candidate} better", "b_better": f"{baseline} better", "inconclusive": "inconclusive"}

# %% [markdown]
# ## What is compared

# %%
for note in notes:
    display(Markdown(f"**Note:** {note}"))
comparisons = [ca.compare(episodes, candidate, baseline, m) for m in REPORT_METRICS]
table = ca.comparisons_frame(comparisons)
first = comparisons[0]
pair = episodes[episodes.variant_id.isin([baseline, candidate])]
display(
    Markdown(
        f"**{candidate}** (candidate) against **{baseline}** (baseline), runs "
        f"{', '.join(sorted(episodes.run_id.unique()))}: {first.n_tasks} tasks paired, up to "
        f"{first.n_repeats} repeats per task, {first.n_excluded_tasks} tasks excluded (no valid episode in "
        f"one variant), {int((pair.outcome == 'invalid').sum())} invalid episodes excluded."
    )
)
pd.crosstab(pair.variant_id, pair.outcome, margins=True, margins_name="total")

# %% [markdown]
# ## Every metric
#
# `diff` is candidate − baseline. For tokens, cost, duration, turns and tool calls *lower is better*, and
# `ratio` (candidate / baseline, with a paired bootstrap interval) is often the easier number to read.
# `test` is the paired test: exact McNemar or a sign-flip permutation test for pass rates, sign-flip
# permutation for scores, paired bootstrap for amounts. `mde` is the minimum detectable effect at this
# number of tasks; `correlation` between the arms' task means shows how much pairing helped.

# %%
def p_text(p: float) -> str:
    return "n/a" if pd.isna(p) else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def ratio_text(row: pd.Series) -> str:
    if pd.isna(row.ratio):
        return ""
    return f"{row.ratio:.2f} [{row.ratio_ci_low:.2f}, {row.ratio_ci_high:.2f}]"


shown = pd.DataFrame(
    {
        "metric": table.metric,
        candidate: table.mean_a.map("{:.3g}".format),
        baseline: table.mean_b.map("{:.3g}".format),
        "diff [95% CI]": [f"{d:+.3g} [{lo:.3g}, {hi:.3g}]" for d, lo, hi in zip(table["diff"], table.ci_low, table.ci_high)],
        "ratio [95% CI]": table.apply(ratio_text, axis=1),
        "p": table.p_value.map(p_text),
        "verdict": table.verdict.map(verdicts),
        "mde": table.mde.map("{:.3g}".format),
    }
).set_index("metric")
display(shown)
display(Markdown("How each number was computed (the paired test, the interval's method, and the correlation of the arms' task means):"))
table.set_index("metric")[["test", "method", "correlation", "n_tasks", "n_repeats"]]

# %%
fig, axes = plt.subplots(len(table), 1, figsize=(8, 1.15 * len(table) + 0.5))
for ax, index in zip(axes, table.index):
    plots.forest_plot(table.loc[[index]], ax)
    ax.set_xlabel("")
axes[-1].set_xlabel(f"paired difference {candidate} − {baseline} (95% CI; green/red: called, grey: inconclusive)")
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
# From these runs as a pilot: the variance of the per-task differences splits into a between-task part
# and a within-task part that shrinks with more repeats. The minimum detectable effect is
# (z₀.₉₇₅ + z₀.₈) · √(Var(d) / T) (α = 0.05, power 0.8); the tasks needed to detect a difference δ are
# (z₀.₉₇₅ + z₀.₈)² · Var(d) / δ². Other numbers of repeats can be planned only when the pilot has repeats.

# %%
primary = ca.compare(episodes, candidate, baseline, metric)
current_mde = ca.mde(episodes, candidate, baseline, metric)
is_rate = metric in ("passed", "score")
effects = [0.05, 0.1, 0.2] if is_rate else [f * abs(primary.mean_b) for f in (0.1, 0.2, 0.5)]
effects = sorted({*effects, abs(primary.diff)} - {0.0})
ks = sorted({1, 3, 5, primary.n_repeats}) if primary.n_repeats >= 2 else [primary.n_repeats]
plan = pd.DataFrame(
    [
        {
            "repeats": k,
            f"mde at {primary.n_tasks} tasks": ca.mde(episodes, candidate, baseline, metric, n_repeats=k),
            **{
                f"tasks for δ = {e:.3g}": ca.required_tasks(episodes, candidate, baseline, e, metric=metric, n_repeats=k)
                for e in effects
            },
        }
        for k in ks
    ]
).set_index("repeats")
display(
    Markdown(
        f"On **{metric}**, with {primary.n_tasks} tasks and {primary.n_repeats} repeats, the smallest "
        f"difference these runs would detect is **{current_mde:.3g}**; the observed difference is "
        f"{primary.diff:.3g} ({verdicts[primary.verdict]})."
    )
)
plan

# %%
write_summary(
    summary_path,
    run_ids=sorted(episodes.run_id.unique()),
    baseline=baseline,
    candidate=candidate,
    metric=metric,
    comparisons=table,
    flips=flipped.drop(columns=["paths_a", "paths_b"]),
    n_gained=counts["fail→pass"],
    n_lost=counts["pass→fail"],
    all_pairs=all_pairs,
    mde=current_mde,
    plan=plan.reset_index(),
)
