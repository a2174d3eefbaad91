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
# # Run report
#
# What ran, how it went and what it cost. Conventions used throughout:
#
# - **The task is the unit of analysis.** Repeats of a task are averaged first; every interval runs
#   over the task means, so a task run three times counts once, not three times.
# - **The headline tasks.** Rates, means, pass@k and cost per resolved task cover the graded tasks (the
#   headline the comparison report compares); classification-only tasks (the rows of a skill-trigger
#   dataset) are scored by the classification report instead. Outcomes and the per-task table list
#   every task.
# - **Invalid episodes** (the harness, sandbox or provider failed, so the agent was not measured) are
#   excluded from every rate and mean, and counted in the `n_invalid_excluded` column.
# - **Suites** are the folders the task files are in and the task tags, each rolled up on its own.
# - **Every interval is 95 %** and the `method` column names how it was computed: *Wilson* (pass rate,
#   one run per task), *Wilson, design effect* (pass rate with repeats), *t over task means* (scores),
#   *cluster bootstrap BCa* (tokens, cost, time, turns: heavy-tailed, so flagged approximate below 50 tasks).
# - A number that cannot be computed reads **n/a** with the reason beside it.
# - A run its cost cap stopped (`--max-cost-usd`, exit code 3) is reported as far as it ran, and a note
#   under *What ran* says so.

# %% tags=["parameters"]
run_dir: str = "../runs/latest"  # run directory: runs/<run_id> or runs/latest
top_n: int = 5  # how many of the slowest and most expensive episodes to list
summary_path: str = ""  # file for the headline numbers as JSON; empty: not written

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

import coder_eval.analysis as ca
from coder_eval.analysis import plots
from coder_eval.analysis import criterion_changes, outcome_changes, regraded_source
from coder_eval.analysis import budget_stops, load_report_runs, md_text, readable, show_scripted_banner, token_buckets_plot, write_summary
from coder_eval.analysis import REPORT_METRICS, verdicts
from coder_eval.analysis import counts_text, invalid_causes

pd.set_option("display.precision", 3)
pd.set_option("display.max_colwidth", 120)
runs, notes = load_report_runs(run_dir)
episodes, criteria, tool_calls = runs.episodes, runs.criteria, runs.tool_calls
repeats = int(episodes.groupby(["task_id", "variant_id"]).size().max())
show_scripted_banner(episodes)
v = verdicts(runs)
headline = v.selection.episodes

# %% [markdown]
# ## What ran

# %%
for note in notes:
    display(Markdown(f"**Note:** {md_text(note)}"))
sources = {True: "scripted model server (offline replay)", False: "real model"}
overview = pd.Series(
    {
        "run": ", ".join(sorted(episodes.run_id.unique())),
        "agent": ", ".join(sorted(episodes.agent.dropna().unique())) or "unknown",
        "model": ", ".join(sorted(episodes.model.dropna().unique())) or "unknown",
        "model source": " and ".join(sources[bool(s)] for s in sorted(episodes.scripted.unique())),
        "tasks": episodes.task_id.nunique(),
        "variants": ", ".join(sorted(episodes.variant_id.unique())),
        "repeats per task and variant": repeats,
        "episodes": len(episodes),
    },
    name="",
)
display(overview.to_frame())
display(Markdown(f"**Headline tasks:** {md_text(v.selection.description)}."))
if v.available:
    display(Markdown(f"**Headline comparison** (the comparison report has it in full): {md_text(v.line())}."))
elif episodes.variant_id.nunique() > 1:
    display(Markdown(f"**No headline comparison:** {md_text(v.note)}."))

# %%
source = regraded_source(run_dir)
if source is not None:
    display(Markdown(
        f"### Re-graded\n\nThis run grades again the recorded episodes of `{md_text(source)}`: no agent ran again, "
        "the criteria and outcomes below are the new verdicts (`coder-eval regrade`)."
    ))
    if (source / "run.json").is_file():
        before, _ = load_report_runs(str(source))
        changes = outcome_changes(before.episodes, episodes)
        verdicts = criterion_changes(before.criteria, criteria)
        display(pd.crosstab(changes.outcome_before.fillna("absent"), changes.outcome_after.fillna("absent"),
                            margins=True, margins_name="total").rename_axis(index="before", columns="after"))
        display(Markdown(f"{int(changes.changed.sum())} episodes changed outcome; "
                         f"{int(verdicts.changed.sum())} criterion verdicts changed:"))
        display(verdicts[verdicts.changed].reset_index(drop=True))
    else:
        display(Markdown("That run is no longer there, so the verdicts cannot be compared."))

# %% [markdown]
# ## Outcomes
#
# `pass` and `fail` are the graders' verdict on the agent's work. `invalid` means the agent was not
# measured (infrastructure or provider error, or a trajectory cut off by a crash); those episodes are
# left out of every number below, counted per variant by their recorded cause, and listed here with
# the reason. A comparison is not called when they could explain it (docs/statistics.md).

# %%
outcomes = pd.crosstab(episodes.variant_id, episodes.outcome, margins=True, margins_name="total")
display(outcomes)
display(pd.crosstab(episodes.variant_id, episodes.status))
invalid = episodes.loc[episodes.outcome == "invalid", ["episode_id", "variant_id", "status", "error"]]
invalid = invalid.assign(cause=invalid_causes(episodes)).reset_index(drop=True)
by_cause = "; ".join(
    f"{variant} {counts_text(ca.invalid_counts(episodes, variant))}" for variant in episodes.variant_id.unique()
)
display(Markdown(f"**{len(invalid)} invalid episodes**, excluded from the rates and means below: {md_text(by_cause)}."))
invalid if len(invalid) else None

# %% [markdown]
# ## Per variant
#
# One row per variant and metric over the headline tasks: the mean over tasks of each task's mean over its
# repeats.
# `passed` is the pass rate; `score` the weighted mean of criterion scores (0–1); `total_tokens` all four
# token buckets (input, output, cache read, cache creation); `cost_usd` the agent's cost (episodes with
# an unknown price are excluded and counted in `n_missing_excluded`); `duration_s` wall time of the
# whole episode; `num_turns` assistant turns; `n_tool_calls` tool calls, sub-agents included.

# %%
per_variant = pd.concat(
    [ca.summarize(headline, metric).assign(metric=metric) for metric in REPORT_METRICS], ignore_index=True
) if len(headline) else pd.DataFrame(columns=["metric", "variant_id", "mean", "ci_low", "ci_high"])
readable(per_variant.set_index(["metric", "variant_id"]))

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
plots.pass_rate_plot(per_variant[per_variant.metric == "passed"], ax)
ax.set_title("Pass rate per variant (95% CI)")
plt.show()

# %% [markdown]
# ## pass@k and pass^k
#
# *pass@k*: the chance that at least one of k attempts passes (unbiased estimator of Chen et al. 2021);
# *pass^k*: the chance that all k attempts pass (tau-bench), a measure of reliability. Both are
# computed per task from its n valid attempts and averaged over tasks, with a t interval over tasks.
# Tasks with fewer than k valid attempts are excluded (`n_tasks_excluded`). Headline tasks only.

# %%
if repeats > 1 and len(headline):
    passk = ca.pass_at_k_table(headline, ks=list(range(1, repeats + 1)))
    display(readable(passk.set_index(["variant_id", "measure", "k"]).sort_index(), why={"*": "no task has k valid attempts"}))
else:
    passk = None
    display(Markdown("No headline task: nothing to estimate." if len(headline) == 0 else "One run per task and variant: pass@k and pass^k need repeats (`--repeats`)."))

# %% [markdown]
# ## Per task
#
# Pass rate over the valid repeats of each task, per variant (grey: no valid episode), and how many
# episodes of each were invalid.

# %%
per_task = episodes.assign(passed=episodes.passed.astype(float), invalid=episodes.outcome == "invalid")
per_task = per_task.pivot_table(
    index="task_id",
    columns="variant_id",
    values=["passed", "invalid", "cost_usd"],
    aggfunc={"passed": "mean", "invalid": "sum", "cost_usd": "mean"},
).rename(columns={"passed": "pass rate", "invalid": "invalid episodes", "cost_usd": "mean cost_usd"})
display(readable(per_task, why={"pass rate": "no valid episode", "mean cost_usd": "no valid episode with a known price"}))
fig, ax = plt.subplots(figsize=(7, 0.45 * episodes.task_id.nunique() + 1.5))
plots.flips_heatmap(episodes, ax, only_changed=False)
ax.set_title("Pass rate per task and variant")
plt.show()

# %% [markdown]
# ## Per suite
#
# Each suite folder (the folder of its task files) and each task tag, per variant: the episodes and
# their outcomes, the pass rate over the valid ones with its 95 % interval (the method of *Per variant*:
# a suite holding every headline task reads the same), and what the suite cost, its total over every
# episode (invalid ones cost too) and the mean per episode with its interval. Every task counts here,
# classification rows included; an episode counts in the suite of each of its tags.

# %%
suites = {by: ca.suite_rollups(episodes, by=by) for by in ("folder", "tag")}
shown_columns = ["suite", "variant_id", "n_tasks", "n_episodes", "n_pass", "n_fail", "n_invalid",
                 "pass_rate", "pass_rate_low", "pass_rate_high", "pass_rate_method", "cost_usd",
                 "cost_usd_mean", "total_tokens", "total_tokens_mean"]
suite_why = {"cost_usd": "no episode with a known price", "cost_usd_mean": "no valid episode with a known price",
             "pass_rate": "no valid episode", "total_tokens_mean": "no valid episode"}
for by, title in (("folder", "By suite folder"), ("tag", "By tag")):
    display(Markdown(f"**{title}:**"))
    display(readable(suites[by][shown_columns].set_index(["suite", "variant_id"]), why=suite_why))

# %% [markdown]
# ## Criteria
#
# Which graders fail most, over valid episodes. *Gating* criteria decide pass or fail; the others are
# informational (weight 0) or only move the score. `grader errors` counts criteria that could not be
# evaluated at all (the grader crashed), which is different from failing.

# %%
graded = criteria[criteria.outcome != "invalid"]
by_criterion = (
    graded.groupby(["criterion_id", "kind"])
    .agg(
        gating=("gating", "first"),
        n=("passed", "size"),
        fail_rate=("passed", lambda s: 1 - s.mean()),
        grader_errors=("error", "count"),
    )
    .sort_values("fail_rate", ascending=False)
)
display(readable(by_criterion))
fail_rates = graded.assign(failed=~graded.passed).pivot_table(
    index="criterion_id", columns="variant_id", values="failed", aggfunc="mean"
).rename_axis(columns="fail rate by variant")
readable(fail_rates, why={"*": "not graded in this variant"})

# %% [markdown]
# ## Tool usage
#
# Every tool call of every episode (invalid ones included: this describes behaviour, not success).

# %%
display(readable(ca.tool_usage(tool_calls), why={"error_rate": "no result recorded"}))
display(Markdown("Most frequent commands (Bash):"))
display(ca.frequent_calls(tool_calls, "Bash"))
display(Markdown("Calls that returned an error, most frequent first:"))
ca.frequent_errors(tool_calls)

# %% [markdown]
# ## Cost per resolved task
#
# Total cost divided by the number of passed episodes (valid episodes with a known cost). The interval
# resamples whole tasks, keeping each task's cost and passes together (paired cluster bootstrap); it is
# undefined when nothing passed. Headline tasks only.

# %%
cost = ca.cost_per_resolved(headline)
readable(cost.set_index("variant_id"))

# %% [markdown]
# ## Tokens and cost
#
# Each point is one headline task's mean over its valid repeats; boxes show the spread over tasks. The
# last panel puts the mean cost against the pass rate, both with 95 % intervals.

# %%
fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
shown = headline if len(headline) else episodes
plots.distribution_plot(shown, axes[0], metric="total_tokens")
plots.distribution_plot(shown, axes[1], metric="cost_usd")
plots.cost_vs_pass_plot(shown, axes[2])
fig.tight_layout()
plt.show()

# %%
fig, ax = plt.subplots(figsize=(7.5, 3.5), layout="constrained")
token_buckets_plot(shown, ax)
ax.set_title("Token buckets")
plt.show()

# %% [markdown]
# ## Slowest and most expensive episodes
#
# The episodes that took longest (wall time of the whole episode: set-up, agent, grading) and those that
# cost most (the agent's cost), invalid ones included, to find what to look at first.

# %%
columns = [
    "episode_id",
    "outcome",
    "status",
    "duration_s",
    "cost_usd",
    "total_tokens",
    "num_turns",
    "n_tool_calls",
]
slow_why = {"cost_usd": "price unknown", "num_turns": "not recorded"}
display(Markdown(f"**The {top_n} slowest episodes** (`duration_s`: seconds, whole episode):"))
display(readable(episodes.nlargest(top_n, "duration_s")[columns].reset_index(drop=True), why=slow_why))
display(Markdown(f"**The {top_n} most expensive episodes** (`cost_usd`: the agent's cost in USD):"))
readable(episodes.nlargest(top_n, "cost_usd")[columns].reset_index(drop=True), why=slow_why)

# %% [markdown]
# ## Judges
#
# When a criterion asks a panel of model judges, each judge's vote is recorded: the first table lists
# the votes (the panel passes by majority), split panels first. Agreement is the share of items where
# every judge voted the same, and Krippendorff's α (nominal; 1 is perfect agreement, 0 is chance).
# Evaluation cost is what the judges' calls cost, on top of the agent's cost.

# %%
has_votes = criteria.details.map(lambda d: isinstance(d, dict) and bool(d.get("votes"))).any()
if has_votes:
    votes = ca.judge_votes(criteria)
    split = votes.groupby(["episode_id", "criterion_id"]).passed.transform("nunique") > 1
    display(
        readable(
            votes.assign(split=split)
            .sort_values(["split", "episode_id"], ascending=[False, True])
            .head(top_n * 4)
        )
    )
    agreement, judge_cost = ca.judge_agreement(criteria), ca.evaluation_cost(criteria)
    display(readable(agreement))
    display(readable(judge_cost, why={"*": "price unknown"}))
else:
    agreement = judge_cost = None
    display(Markdown("No criterion in this run asked a judge panel."))

# %%
write_summary(
    summary_path,
    run_ids=sorted(episodes.run_id.unique()),
    n_episodes=len(episodes),
    repeats=repeats,
    outcomes=episodes.outcome.value_counts().sort_index(),
    verdict=v.headline(),
    headline_tasks=v.selection.tasks,
    invalid=invalid,
    per_variant=per_variant,
    pass_at_k=passk,
    cost_per_resolved=cost,
    suites=suites,
    budget_stopped=budget_stops(run_dir.split(",")),
    judge_agreement=agreement,
    evaluation_cost=judge_cost,
)
